/* ibx-test: np=3,4 timeout=60 launchers=mpilite */
/*
 * mutex_death_waiter — a process that dies while queued for an MPIX_Mutex
 * must not leave the holder or the other waiters waiting for ever
 * (IBX_MUTEX_ALGO: mcs here; mutex_death_waiter_onesided and
 * mutex_death_waiter_hybrid run this program under the other two).
 * mutex_death covers a dead holder.
 *
 *   rank 0   home of mutex 0; collects every report and checks it
 *   rank 1   holds mutex 0, waits until rank 2 is gone, then unlocks
 *   rank 2   locks mutex 0 behind rank 1 (queued: MCS tail and link, or
 *            its waitlist byte) and dies there: a SIGALRM handler calls
 *            _exit(0) (status 0, so the launcher lets the job go on)
 *   rank 3.. lock mutex 0 a little later, usually queued behind rank 2
 *
 * The holder's unlock and every later lock must return, either with
 * MPI_SUCCESS (the hand-off went to a live process, or to the dead one
 * without error) or with MPI_ERR_OTHER (a lost member was seen), under
 * MPI_ERRORS_RETURN; a hang fails the test through its time limit. A lock
 * granted to rank 2 while rank 1 holds the mutex fails at once. Rank 2's
 * alarm is long enough for it to have queued in practice; should it fire
 * earlier, the test still checks the same outcomes. Only mpilite-run: other
 * launchers end a job whose rank exits early.
 */
#include "mpitest.h"

#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define DW_TAG	    7
#define DW_ALARM_MS 300 /* rank 2 dies this long after it starts to lock */

static void die_now(int sig)
{
	(void)sig;
	_exit(0);
}

/* Has process @pid exited (gone, or a zombie not reaped yet)? */
static int gone(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	if (kill(pid, 0) == -1 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* "pid (comm) S ..." */
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int class_of(int rc)
{
	int cls = -1;

	MPI_OK(MPI_Error_class(rc, &cls));
	return cls;
}

int main(int argc, char **argv)
{
	int rank, size, rc, rep[2];
	int pid;
	MPIX_Mutex m;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPIX_Mutex_create(2, MPI_COMM_WORLD, &m));
	if (rank == 2) {
		pid = (int)getpid();
		MPI_OK(MPI_Send(&pid, 1, MPI_INT, 1, DW_TAG, MPI_COMM_WORLD));
	} else if (rank == 1) {
		MPI_OK(MPI_Recv(&pid, 1, MPI_INT, 2, DW_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		MPI_OK(MPIX_Mutex_lock(m, 0, 0));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	switch (rank) {
	case 0:
		/* the holder's unlock, then every later waiter's lock (and unlock) */
		for (int r = 1; r < size; r++) {
			if (r == 2)
				continue;
			MPI_OK(MPI_Recv(rep, 2, MPI_INT, r, DW_TAG, MPI_COMM_WORLD,
					MPI_STATUS_IGNORE));
			CHECK(rep[0] == MPI_SUCCESS || rep[0] == MPI_ERR_OTHER,
			      "rank %d's %s ended with class %d", r, r == 1 ? "unlock" : "lock",
			      rep[0]);
			CHECK(rep[1] == MPI_SUCCESS || rep[1] == MPI_ERR_OTHER,
			      "rank %d's unlock ended with class %d", r, rep[1]);
			printf("mutex_death_waiter: rank %d's %s: %s\n", r,
			       r == 1 ? "unlock" : "lock",
			       rep[0] == MPI_SUCCESS ? "granted" : "MPI_ERR_OTHER (lost member)");
		}
		/* the survivors stay until now, so that rank 2 is the only one lost */
		for (int r = 1; r < size; r++)
			if (r != 2)
				MPI_OK(MPI_Send(&r, 1, MPI_INT, r, DW_TAG, MPI_COMM_WORLD));
		break;
	case 1: {
		struct timespec t0, t;

		/* hold until rank 2 is dead: it has queued behind us by then */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!gone((pid_t)pid)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			CHECK(t.tv_sec - t0.tv_sec < 30, "rank 2 (pid %d) did not die", pid);
			sleep_ms(5);
		}
		rc = MPIX_Mutex_unlock(m, 0, 0);
		rep[0] = class_of(rc);
		rep[1] = MPI_SUCCESS;
		MPI_OK(MPI_Send(rep, 2, MPI_INT, 0, DW_TAG, MPI_COMM_WORLD));
		MPI_OK(MPI_Recv(&rc, 1, MPI_INT, 0, DW_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		break;
	}
	case 2: {
		struct sigaction sa;
		struct itimerval it = {{0, 0}, {0, DW_ALARM_MS * 1000}};

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = die_now;
		sigemptyset(&sa.sa_mask);
		CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
		fflush(stdout);
		CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer: %s", strerror(errno));
		rc = MPIX_Mutex_lock(m, 0, 0);
		/* rank 1 holds the mutex until we are dead: any return is wrong */
		CHECK(0, "the lock of a waiter returned (class %d) while rank 1 held the mutex",
		      class_of(rc));
		break;
	}
	default:
		sleep_ms(DW_ALARM_MS / 3); /* usually behind rank 2 in the queue */
		rc = MPIX_Mutex_lock(m, 0, 0);
		rep[0] = class_of(rc);
		rep[1] = MPI_SUCCESS;
		if (rc == MPI_SUCCESS)
			rep[1] = class_of(MPIX_Mutex_unlock(m, 0, 0));
		MPI_OK(MPI_Send(rep, 2, MPI_INT, 0, DW_TAG, MPI_COMM_WORLD));
		MPI_OK(MPI_Recv(&rc, 1, MPI_INT, 0, DW_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		break;
	}
	fflush(stdout);
	_exit(0);
}
