/*
 * memhooks.c — telling registration caches that memory went away.
 *
 * Two layers (reg_cache.h explains why both, and what each catches):
 *
 *   application / other .so            glibc internals (free, trim, arenas)
 *           | PLT or direct call                 | hidden alias __munmap, __brk...
 *           v                                    v
 *   munmap() etc. defined here  --next-->  libc's munmap entry
 *   (interposers: report the         [patch mode: 13-byte jump] --> hook_munmap():
 *    event unless libc's entry          report the event, then the raw system call
 *    is patched, then forward)
 *
 * Reporting = pushing the range onto the pending ring of every cache whose
 * bounding box it touches (rcache_invq_t): a spinlock around a few stores,
 * no allocation, no cache lock — the event may come from inside malloc or
 * from a provider that holds its own locks. The caches drain their rings at
 * their next API call.
 *
 * Start-up: a constructor resolves the next definitions with
 * dlsym(RTLD_NEXT) (dlsym may call malloc; nothing here calls dlsym
 * lazily, so no recursion) and then, if IBX_RCACHE_ENABLE, patches libc
 * (x86-64) or falls back to mallopt. Until it has run — in other
 * libraries' constructors, or in a static executable where RTLD_NEXT finds
 * nothing — the interposers issue the raw system calls themselves.
 */
#define _GNU_SOURCE
#include "reg_cache_int.h"

#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif
#ifndef MADV_FREE
#define MADV_FREE 8
#endif

enum { MH_NONE, MH_INTERPOSE, MH_PATCH };
enum { F_MUNMAP, F_MREMAP, F_MADVISE, F_MMAP, F_BRK, F_COUNT };

static int mh_mode = MH_NONE;
static bool mh_patched[F_COUNT]; /* libc's entry of that function reports */
static uintptr_t mh_page = 4096;

static int (*next_munmap)(void *, size_t);
static void *(*next_mremap)(void *, size_t, size_t, int, ...);
static int (*next_madvise)(void *, size_t, int);
static void *(*next_mmap)(void *, size_t, int, int, int, off_t);
static int (*next_brk)(void *);
static void *(*next_sbrk)(intptr_t);
static int (*next_malloc_trim)(size_t);

extern void *__curbrk;		   /* glibc: the current break */
extern void *__sbrk(intptr_t inc); /* glibc: sbrk without interposition */

/* ---- listeners ------------------------------------------------------------ */

/* Reader-preferring (glibc's default), so a hook that fires while the same
 * thread already reads the list cannot deadlock. Writers never allocate or
 * unmap while holding it. */
static pthread_rwlock_t mh_lock = PTHREAD_RWLOCK_INITIALIZER;
static ibx_rcache_t *mh_caches;
static atomic_int mh_ncaches;

static void invq_push(ibx_rcache_t *cache, uintptr_t start, uintptr_t end)
{
	rcache_invq_t *q = &cache->invq;

	if (end <= atomic_load(&cache->bbox_lo) || start >= atomic_load(&cache->bbox_hi))
		return;
	while (atomic_flag_test_and_set_explicit(&q->lock, memory_order_acquire))
		ibx_cpu_relax();
	if (q->overflow) {
		if (start < q->ov_start)
			q->ov_start = start;
		if (end > q->ov_end)
			q->ov_end = end;
	} else if (q->n < RCACHE_INVQ_SIZE) {
		q->start[q->n] = start;
		q->end[q->n] = end;
		q->n++;
	} else {
		q->overflow = true;
		q->ov_start = start;
		q->ov_end = end;
	}
	atomic_store_explicit(&q->pending, 1, memory_order_relaxed);
	atomic_flag_clear_explicit(&q->lock, memory_order_release);
}

/* [addr, addr + len) is about to stop being the memory it was. */
static void mh_event(const void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr & ~(mh_page - 1);
	uintptr_t end = (uintptr_t)addr + len;

	if (len == 0 || atomic_load_explicit(&mh_ncaches, memory_order_acquire) == 0)
		return;
	if (end < (uintptr_t)addr) /* wraps: everything above addr */
		end = UINTPTR_MAX;
	else if (end <= UINTPTR_MAX - (mh_page - 1))
		end = (end + mh_page - 1) & ~(mh_page - 1);
	pthread_rwlock_rdlock(&mh_lock);
	for (ibx_rcache_t *c = mh_caches; c; c = c->hook_next)
		invq_push(c, start, end);
	pthread_rwlock_unlock(&mh_lock);
}

void ibx_memhooks_add(ibx_rcache_t *cache)
{
	if (mh_mode == MH_NONE)
		ibx_warn("%s: IBX_RCACHE_ENABLE was off when libibx was loaded, so libc was"
			 " neither patched nor tuned: only munmap/mremap/madvise/mmap/brk calls"
			 " made through the interposed symbols invalidate this cache",
			 cache->name);
	pthread_rwlock_wrlock(&mh_lock);
	cache->hook_next = mh_caches;
	mh_caches = cache;
	cache->hooked = true;
	atomic_fetch_add(&mh_ncaches, 1);
	pthread_rwlock_unlock(&mh_lock);
}

void ibx_memhooks_remove(ibx_rcache_t *cache)
{
	pthread_rwlock_wrlock(&mh_lock);
	for (ibx_rcache_t **pp = &mh_caches; *pp; pp = &(*pp)->hook_next) {
		if (*pp == cache) {
			*pp = cache->hook_next;
			atomic_fetch_sub(&mh_ncaches, 1);
			break;
		}
	}
	cache->hooked = false;
	pthread_rwlock_unlock(&mh_lock);
}

const char *ibx_rcache_memhooks_mode(void)
{
	switch (mh_mode) {
	case MH_PATCH: return "patch";
	case MH_INTERPOSE: return "interpose";
	default: return "none";
	}
}

static bool advice_drops_pages(int advice)
{
	return advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE ||
	       advice == MADV_DONTNEED_LOCKED;
}

/* ---- raw system calls ----------------------------------------------------- */

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* glibc's __brk, including its bookkeeping of the break. */
static int raw_brk(void *addr)
{
	void *newbrk = (void *)syscall(SYS_brk, addr);

	__curbrk = newbrk;
	if (newbrk < addr) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void *current_break(void)
{
	return __curbrk ? __curbrk : (void *)syscall(SYS_brk, 0);
}

static void brk_event(void *addr)
{
	void *cur = current_break();

	if (addr && cur && (uintptr_t)addr < (uintptr_t)cur)
		mh_event(addr, (uintptr_t)cur - (uintptr_t)addr);
}

/* ---- hooks: where patched libc entries land ------------------------------- */

static int hook_munmap(void *addr, size_t len)
{
	mh_event(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

static void *hook_mremap(void *addr, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
		mh_event(new_addr, new_len); /* whatever was there is replaced */
	}
	/* Moved, shrunk or (DONTUNMAP) emptied: the old pages are gone from
	 * here in every case but an in-place grow, which is rare enough to
	 * pay a re-registration. */
	mh_event(addr, old_len);
	return (void *)syscall(SYS_mremap, addr, old_len, new_len, flags, new_addr);
}

static int hook_madvise(void *addr, size_t len, int advice)
{
	if (advice_drops_pages(advice))
		mh_event(addr, len);
	return (int)syscall(SYS_madvise, addr, len, advice);
}

static void *hook_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if ((flags & MAP_FIXED) && addr)
		mh_event(addr, len);
	return raw_mmap(addr, len, prot, flags, fd, off);
}

static int hook_brk(void *addr)
{
	brk_event(addr);
	return raw_brk(addr);
}

/* ---- interposers ---------------------------------------------------------- */

/*
 * ThreadSanitizer's runtime intercepts mmap/munmap itself and calls them
 * before it is initialised; an exported definition here would be called
 * instrumented at that point and crash every TSan binary at start-up. Under
 * TSan only the libc patch reports (TSan's interceptors end in libc's
 * patched entry points).
 */
#if defined(__SANITIZE_THREAD__)
#define IBX_MEMHOOKS_INTERPOSE 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IBX_MEMHOOKS_INTERPOSE 0
#endif
#endif
#ifndef IBX_MEMHOOKS_INTERPOSE
#define IBX_MEMHOOKS_INTERPOSE 1
#endif

#if IBX_MEMHOOKS_INTERPOSE

/* The interposers replace libc's functions for the whole process, so they
 * are exported although the library hides everything else. */
#define MH_EXPORT __attribute__((visibility("default")))

MH_EXPORT int munmap(void *addr, size_t len)
{
	if (!mh_patched[F_MUNMAP])
		mh_event(addr, len);
	if (next_munmap)
		return next_munmap(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

MH_EXPORT void *mremap(void *addr, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!mh_patched[F_MREMAP]) {
		if (flags & MREMAP_FIXED)
			mh_event(new_addr, new_len);
		mh_event(addr, old_len);
	}
	if (next_mremap)
		return next_mremap(addr, old_len, new_len, flags, new_addr);
	return (void *)syscall(SYS_mremap, addr, old_len, new_len, flags, new_addr);
}

MH_EXPORT int madvise(void *addr, size_t len, int advice)
{
	if (!mh_patched[F_MADVISE] && advice_drops_pages(advice))
		mh_event(addr, len);
	if (next_madvise)
		return next_madvise(addr, len, advice);
	return (int)syscall(SYS_madvise, addr, len, advice);
}

MH_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!mh_patched[F_MMAP] && (flags & MAP_FIXED) && addr)
		mh_event(addr, len);
	if (next_mmap)
		return next_mmap(addr, len, prot, flags, fd, off);
	return raw_mmap(addr, len, prot, flags, fd, off);
}

MH_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return mmap(addr, len, prot, flags, fd, (off_t)off);
}

MH_EXPORT int brk(void *addr)
{
	if (!mh_patched[F_BRK])
		brk_event(addr);
	if (next_brk)
		return next_brk(addr);
	return raw_brk(addr);
}

MH_EXPORT void *sbrk(intptr_t inc)
{
	/* glibc's sbrk moves the break through its (patched) brk. */
	if (!mh_patched[F_BRK] && inc < 0) {
		uintptr_t cur = (uintptr_t)current_break();

		if (cur && (uintptr_t)-inc <= cur)
			mh_event((void *)(cur + (uintptr_t)inc), (size_t)-inc);
	}
	if (next_sbrk)
		return next_sbrk(inc);
	return __sbrk(inc);
}

MH_EXPORT int malloc_trim(size_t pad)
{
	/* Trimming releases free heap pages with glibc-internal madvise/sbrk
	 * calls. Patched, those report themselves; otherwise we cannot know
	 * which pages went, so every cached region is dropped. */
	if (!(mh_patched[F_MADVISE] && mh_patched[F_BRK]))
		mh_event(NULL, SIZE_MAX);
	return next_malloc_trim ? next_malloc_trim(pad) : 0;
}

#endif /* IBX_MEMHOOKS_INTERPOSE */

/* ---- patching libc (x86-64) ----------------------------------------------- */

#if defined(__x86_64__)
#define PATCH_LEN 13

/* movabs $hook, %r11 ; jmp *%r11 — r11 is scratch at a call boundary and
 * carries no argument. */
static void patch_code(uint8_t code[PATCH_LEN], void *hook)
{
	uint64_t a = (uint64_t)(uintptr_t)hook;

	code[0] = 0x49;
	code[1] = 0xbb;
	memcpy(&code[2], &a, sizeof(a));
	code[10] = 0x41;
	code[11] = 0xff;
	code[12] = 0xe3;
}

/* Someone else (UCX, Open MPI, a debugger) already redirected it? */
static bool looks_patched(const uint8_t *p)
{
	return p[0] == 0xe9 || p[0] == 0xeb || (p[0] == 0xff && p[1] == 0x25) ||
	       ((p[0] == 0x48 || p[0] == 0x49) && (p[1] == 0xb8 || p[1] == 0xbb));
}

static bool patch_symbol(void *libc, const char *name, void *hook)
{
	const ElfW(Sym) *sym = NULL;
	uint8_t code[PATCH_LEN];
	uintptr_t page, span;
	Dl_info info;
	uint8_t *target = dlsym(libc, name);

	if (!target || !dladdr1(target, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    info.dli_saddr != (void *)target || sym->st_size < PATCH_LEN) {
		ibx_debug("memhooks: libc's %s cannot be patched (not found or too short)", name);
		return false;
	}
	if (looks_patched(target)) {
		ibx_info("memhooks: libc's %s already starts with a jump (another memory hook"
			 " library?); leaving it alone",
			 name);
		return false;
	}
	page = (uintptr_t)target & ~(mh_page - 1);
	span = (((uintptr_t)target + PATCH_LEN + mh_page - 1) & ~(mh_page - 1)) - page;
	/* Never drop PROT_EXEC: the page may hold mprotect itself. */
	if (mprotect((void *)page, span, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		ibx_info("memhooks: mprotect of libc's %s failed: %s", name, strerror(errno));
		return false;
	}
	patch_code(code, hook);
	memcpy(target, code, PATCH_LEN);
	if (mprotect((void *)page, span, PROT_READ | PROT_EXEC))
		ibx_warn("memhooks: restoring the protection of libc's %s failed: %s", name,
			 strerror(errno));
	__builtin___clear_cache((char *)target, (char *)target + PATCH_LEN);
	return true;
}

static bool patch_libc(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	bool all = true;

	if (!libc) {
		ibx_debug("memhooks: libc.so.6 is not loaded (static executable?): no patching");
		return false;
	}
	mh_patched[F_MUNMAP] = patch_symbol(libc, "munmap", (void *)hook_munmap);
	mh_patched[F_MREMAP] = patch_symbol(libc, "mremap", (void *)hook_mremap);
	mh_patched[F_MADVISE] = patch_symbol(libc, "madvise", (void *)hook_madvise);
	mh_patched[F_MMAP] = patch_symbol(libc, "mmap", (void *)hook_mmap);
	mh_patched[F_BRK] = patch_symbol(libc, "brk", (void *)hook_brk);
	dlclose(libc);
	for (int f = 0; f < F_COUNT; f++)
		all = all && mh_patched[f];
	return all;
}
#else
static bool patch_libc(void)
{
	return false;
}
#endif

/* ---- start-up ------------------------------------------------------------- */

/* Without patching, glibc's internal munmap/madvise/sbrk calls are
 * invisible: ask it never to give memory back by itself. */
static void tune_malloc(void)
{
	if (!mallopt(M_MMAP_MAX, 0))
		ibx_warn("memhooks: mallopt(M_MMAP_MAX, 0) failed");
	if (!mallopt(M_TRIM_THRESHOLD, -1))
		ibx_warn("memhooks: mallopt(M_TRIM_THRESHOLD, -1) failed");
	if (!mallopt(M_ARENA_MAX, 1))
		ibx_warn("memhooks: mallopt(M_ARENA_MAX, 1) failed");
}

/*
 * In a child of fork() only the forking thread exists, but it inherits the
 * locks as they were: a hook that was running in another thread leaves
 * mh_lock read-held or a ring's spinlock set forever. Reset them there.
 * (No prepare handler taking mh_lock: a thread inside free() holds a malloc
 * arena lock and may be blocked in a hook on it, while fork() waits for
 * that arena lock — a deadlock.)
 */
static void mh_atfork_child(void)
{
	pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;

	memcpy(&mh_lock, &fresh, sizeof(fresh));
	for (ibx_rcache_t *c = mh_caches; c; c = c->hook_next)
		atomic_flag_clear(&c->invq.lock);
}

__attribute__((constructor)) static void memhooks_init(void)
{
	const ibx_rcache_config_t *cfg;
	const char *want;
	long page = sysconf(_SC_PAGESIZE);

	if (page > 0)
		mh_page = (uintptr_t)page;
	next_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	next_mremap = (void *(*)(void *, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
	next_madvise = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
	next_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	next_brk = (int (*)(void *))dlsym(RTLD_NEXT, "brk");
	next_sbrk = (void *(*)(intptr_t))dlsym(RTLD_NEXT, "sbrk");
	next_malloc_trim = (int (*)(size_t))dlsym(RTLD_NEXT, "malloc_trim");
	pthread_atfork(NULL, NULL, mh_atfork_child);

	cfg = ibx_rcache_config();
	if (!cfg->RCACHE_ENABLE)
		return;
#if !IBX_MEMHOOKS_INTERPOSE
	/* TSan build: its shadow memory does not cover libc's text, so neither
	 * patching nor interposing is possible; registrations are not
	 * invalidated on unmap in this build (it exists for the lock-free
	 * code, not for the cache). */
	ibx_debug("memhooks: disabled under ThreadSanitizer");
	return;
#endif
	want = cfg->RCACHE_MEMHOOKS;
	if (!strcmp(want, "patch") || !strcmp(want, "auto")) {
		if (patch_libc()) {
			mh_mode = MH_PATCH;
			ibx_debug("memhooks: libc's munmap/mremap/madvise/mmap/brk patched");
			return;
		}
		if (!strcmp(want, "patch"))
			ibx_warn("memhooks: IBX_RCACHE_MEMHOOKS=patch, but libc could not be"
				 " patched; using interposition and mallopt instead");
	} else if (strcmp(want, "interpose")) {
		ibx_warn("memhooks: IBX_RCACHE_MEMHOOKS=%s is not patch|interpose|auto; using"
			 " interpose",
			 want);
	}
	/* Partly patched entries still report; what is missing is covered by
	 * keeping glibc from returning memory. */
	tune_malloc();
	mh_mode = MH_INTERPOSE;
	ibx_debug("memhooks: interposition + mallopt (no mmap'ed malloc chunks, no trimming,"
		  " one arena)");
}
