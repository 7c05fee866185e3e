/*
 * config_table.h — THE table of every IBX_* tunable (name, type, default,
 * help). Each line becomes a field of ibx_config_t (core/config.c) and a row
 * of `ibtest info`. Add a tunable by adding one line in its module's section.
 *
 *   IBX_CONFIG(field, type, "default", "help")
 *   type: STR, INT (int64, accepts k/m/g suffixes), BOOL (y/n/1/0/on/off)
 *
 * One row per line (a table reads better unwrapped, and scripts/config-doc.sh
 * reads the rows), so clang-format leaves this file alone.
 */
// clang-format off

/* core */
IBX_CONFIG(LOG, STR, "warn", "log level: error|warn|info|debug|trace")
IBX_CONFIG(PATHS, STR, "auto", "auto (shm for node-local peers, verbs for the rest), shm, or verbs (every peer, node-local ones included, through core/qp)")
IBX_CONFIG(SPIN_COUNT, INT, "2000", "idle progress passes before a waiting rank starts yielding the CPU (when node-local ranks outnumber the CPUs, waiters yield after a few passes unless this is set)")
IBX_CONFIG(PEER_CHECK_MS, INT, "200", "while waiting, how often (ms) to check that node-local peers are still alive")
IBX_CONFIG(BOOT_TIMEOUT, INT, "60", "seconds a bootstrap (PMIx) get waits for a key that a peer has not published yet before failing")

/* core/shm_lf */
IBX_CONFIG(SHM_RING_SLOTS, INT, "1024", "cache-line slots in each ordered-pair ring (power of two, 8..65536; 64 bytes each, 40 payload bytes in a packet's first slot, 60 in the others)")
IBX_CONFIG(SHM_EAGER_LIMIT, INT, "8k", "largest message sent through the slot ring (at most what half the receiver's ring holds); larger ones use a rendezvous. Measured: the ring has the lower latency up to 8-16k, the pipe the higher streaming bandwidth from 8k")
IBX_CONFIG(SHM_CMA_THRESHOLD, INT, "64k", "rendezvous size from which the kernel single copy (CMA: the receiver process_vm_readv's the first half while the sender process_vm_writev's the second) replaces the pipelined copy; 0 = never. Measured: CMA streams 1.6-3x faster from 64k, the pipe is ~20% quicker in ping-pong only below 128k")
IBX_CONFIG(SHM_PIPE_CHUNK, INT, "16k", "chunk size of the pipelined rendezvous copy (multiple of 64, 4k..64m); smaller chunks fill the pipeline sooner (ping-pong), streaming is the same from 16k to 64k")
IBX_CONFIG(SHM_PIPE_CHUNKS, INT, "16", "chunks per ordered pair in the pipelined copy (2..1024): the sender fills one while the receiver drains another")
IBX_CONFIG(SHM_DIR, STR, "/dev/shm", "directory of the shared segments (they are unlinked as soon as all peers have attached)")

/* core/qp */
IBX_CONFIG(DEVICE, STR, "", "verbs device and port, name:port (default: the first active port)")
IBX_CONFIG(GID_INDEX, INT, "-1", "RoCE GID index (-1: pick the RoCEv2 IPv4-mapped GID, else the first valid one)")
IBX_CONFIG(IB_EAGER_LIMIT, INT, "8k", "largest message sent eagerly over verbs; larger ones use zero-copy RDMA rendezvous")
IBX_CONFIG(IB_RX_BUFS, INT, "512", "receive buffers pre-posted on the shared receive queue")
IBX_CONFIG(IB_CREDITS, INT, "64", "send credits per peer (eager messages in flight before the receiver returns credits)")
IBX_CONFIG(IB_INLINE, INT, "128", "largest send posted inline")
IBX_CONFIG(IB_SIGNAL_EVERY, INT, "16", "selective signalling: request a completion every N sends")
IBX_CONFIG(IB_TIMEOUT, INT, "14", "QP local ACK timeout exponent (4.096us * 2^N)")
IBX_CONFIG(IB_RETRY, INT, "7", "QP transport retry count")
IBX_CONFIG(IB_SQ_DEPTH, INT, "256", "send queue depth of each RC QP (work requests in flight per peer)")
IBX_CONFIG(IB_TX_BUFS, INT, "256", "registered bounce buffers for eager sends that do not fit inline")

/* mpi-lite collectives */
IBX_CONFIG(COLL_HIER, BOOL, "y", "collectives: node-aware algorithms (inside each node first, then among one representative per node) on communicators that span several nodes")
IBX_CONFIG(COLL_NODE_SIZE, INT, "0", "collectives: take every N consecutive world ranks for one node instead of the real node map (tests the node-aware algorithms on one machine); 0 = the real map")

/* core/reg_cache */
IBX_CONFIG(RCACHE_ENABLE, BOOL, "y", "cache memory registrations")
IBX_CONFIG(RCACHE_MAX_BYTES, INT, "4g", "most bytes kept registered in the cache")
IBX_CONFIG(RCACHE_MAX_ENTRIES, INT, "4096", "most regions kept in the cache")
IBX_CONFIG(OGR_ENABLE, BOOL, "y", "Optimistic Group Registration for lists of buffers")
IBX_CONFIG(DT_WIRE_MAX, INT, "16m", "largest serialised datatype layout accepted from a peer (bytes); larger ones are rejected as corrupt")
IBX_CONFIG(RCACHE_MEMHOOKS, STR, "auto", "how the cache learns that memory went away: patch (redirect libc's munmap/mremap/madvise/mmap/brk so calls from inside malloc are seen too; x86-64), interpose (symbol interposition plus mallopt so malloc never returns memory by itself), auto (patch if possible, else interpose)")
// clang-format on
