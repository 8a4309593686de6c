/* SPDX-License-Identifier: MIT */
/*
 * hostile.c - a traced program that treats the recorder badly, on purpose
 * (tests/e2e/test_hostile.py): it scribbles over its own shared buffers,
 * shrinks them under the recorder, makes threads and processes by the
 * thousand, takes memfd_create away from itself, and fires a child's
 * first event while the recorder is stopped.
 *
 *   prog-hostile scribble-max      one event, then its stream's slots'
 *                                  commits 0 and produced UINT64_MAX; prints
 *                                  "scribbled TID" and waits to be killed
 *   prog-hostile scribble-ahead N  N events, then produced moved 2^40
 *                                  packets ahead (commits as they are);
 *                                  prints "scribbled TID", lives 1 s more
 *   prog-hostile scribble-lost N   N events, then its stream's loss
 *                                  counters set past 2^60; prints
 *                                  "scribbled TID", lives 1 s more
 *   prog-hostile scribble-class N  one event; forks a child that fires N
 *                                  events (a process of its own, its own
 *                                  arena); then its arena's class_id set
 *                                  to 77 and N events more; prints
 *                                  "scribbled TID CHILD-PID" and waits
 *                                  for the child
 *   prog-hostile truncate          one event, then ftruncate(0) of its
 *                                  arena's control memfd through
 *                                  /proc/self/map_files;
 *                                  prints "truncated TID" or "refused
 *                                  TID ERRNO-NAME"; lives 1 s more (no
 *                                  event: its own stores would fault)
 *   prog-hostile threads N         N threads one after another, each fires
 *                                  one event and exits; prints "done",
 *                                  then waits for a line on stdin
 *   prog-hostile hellos N M        N more connections to the recorder,
 *                                  each closed once it said HELLO; then
 *                                  M events; prints "fired M"
 *   prog-hostile orphan N          forks and exits without an event; the
 *                                  child fires N events 200 ms later and
 *                                  prints "child fired N"
 *   prog-hostile children N [P]    N child processes, P alive at once
 *                                  (default 1), each fires one event and
 *                                  exits; prints "done N" (children that
 *                                  exited 0)
 *   prog-hostile seccomp N         memfd_create fails (EPERM, seccomp)
 *                                  from the start (the program runs
 *                                  itself again under the filter as
 *                                  "fire N"); N events; prints "fired N"
 *   prog-hostile fork-first        one event; prints "ready", waits for a
 *                                  line on stdin, forks: the child fires
 *                                  its first event and prints "child PID
 *                                  nvcsw N" (voluntary context switches
 *                                  during it: 0 when it never waited)
 *   prog-hostile names             thread names with terminal escapes:
 *                                  the main thread named ESC "]0;x" BEL
 *                                  before its event, a thread that fires
 *                                  as "plain" and leaves named ESC "[2Jz";
 *                                  prints "names MAIN-TID THREAD-TID"
 *   prog-hostile errors N          a second connection to the recorder
 *                                  (TRACEKIT_SESSION): HELLO, N ERROR
 *                                  messages "error K"; prints "sent N"
 *   prog-hostile event-id ID       a second connection: HELLO, an EVENT
 *                                  of id ID (its descriptor the runtime's
 *                                  test:seq one is not needed: zeros),
 *                                  EVENTS_DONE; prints "dropped" when the
 *                                  recorder closes it, "kept" when it
 *                                  answers with a CONFIG
 *   prog-hostile event-field NAME  the same with a well-formed descriptor
 *                                  (event hostile:bad) of one u32 field
 *                                  named NAME
 *   prog-hostile hello-pid PID     event-field x on a connection whose
 *                                  HELLO claims to be process PID (and
 *                                  its child), which then says it lost
 *                                  one event (NOBUF)
 *   prog-hostile same-tid N        one event, then N times: a descriptor
 *                                  of its arena made to look as a stream
 *                                  of thread 424242 that closed one empty
 *                                  packet, the recorder woken, until it
 *                                  has recycled it; prints "rounds N"
 *   prog-hostile queue-first       one event; a second connection whose
 *                                  socket may hold 64 MiB; the recorder
 *                                  (our parent) stopped while it sleeps
 *                                  in ppoll; a few packets closed and the
 *                                  socket filled with ERROR messages;
 *                                  the recorder continued: prints
 *                                  "queued BYTES of SENT" (bytes still in
 *                                  the socket when the recorder had read
 *                                  our closed packets: 0 when it read
 *                                  every message first)
 *   prog-hostile close-wake FILE   one event; the recorder's eventfd
 *                                  closed and FILE (created empty) opened
 *                                  on its number, as daemons that close
 *                                  every descriptor do; events until a
 *                                  writer has woken the recorder; prints
 *                                  "fired N size BYTES" (FILE's size)
 *   prog-hostile many-events E S   a second connection announces E events
 *                                  (ids 0 to E-1, one u32 field each),
 *                                  then hands over an arena of the
 *                                  CONFIG's geometry whose S streams each
 *                                  have an open packet full of events of
 *                                  id E-1, and leaves; prints "left"
 *   prog-hostile big-arena MIB     a second connection hands the recorder
 *                                  an arena of its own making, sound but
 *                                  for a pool of MIB MiB (not --pool), and
 *                                  keeps saying it starves for 2 s;
 *                                  prints "dropped" when the recorder
 *                                  closes it, else "kept"
 *
 * Events: test:seq (thread, seq, msg) of tests/progs/test-events.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/protocol.h"
#include "common/ringbuf-layout.h"
#include "test-events.h"

static const char *const msgs[] = { "zero", "one", "two", "three", "four",
				     "five", "six", "seven", "eight", "nine" };

static void fire(uint32_t thread, uint64_t seq)
{
	tk_trace(test, seq, thread, seq, msgs[seq % 10]);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Whether process @pid maps the file of inode @ino. */
static bool maps_inode(pid_t pid, unsigned long ino)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long i;

		found = sscanf(line, "%*x-%*x %*s %*x %*x:%*x %lu", &i) == 1 && i == ino;
	}
	if (f)
		fclose(f);
	return found;
}

/* The calling thread's stream in its process's arena (the control memfd
 * in /proc/self/maps, common/ringbuf-layout.h).  Returns once the
 * recorder (our parent, under record -- CMD) maps the arena too, so that
 * what follows happens to memory it holds. */
struct mine {
	struct tk_arena *h;
	struct tk_rb_stream *d;
	uint64_t *produced;   /* the stream's produced counter */
	unsigned long lo, hi; /* the control memfd's mapping */
};

static struct mine my_stream(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	struct mine m = { 0 };
	unsigned long ino = 0;

	while (f && !m.d && fgets(line, sizeof(line), f)) {
		unsigned long a, b, i;
		struct tk_arena *h;

		if (!strstr(line, "memfd:tracekit-buffer") ||
		    sscanf(line, "%lx-%lx %*s %*x %*x:%*x %lu", &a, &b, &i) != 3)
			continue;
		h = (struct tk_arena *)a;
		if (h->magic != TK_ARENA_MAGIC || h->pid != (uint32_t)getpid())
			continue;
		for (uint32_t s = 0; s < h->streams_max && !m.d; s++) {
			struct tk_rb_stream *d = (struct tk_rb_stream *)
				((char *)h + h->streams + (size_t)s * h->stream_size);

			if (d->state == TK_RB_OPEN && d->tid == (uint32_t)gettid_()) {
				m = (struct mine){ h, d, (uint64_t *)((char *)h + h->produced) + s,
						   a, b };
				ino = i;
			}
		}
	}
	if (f)
		fclose(f);
	if (!m.d) {
		fprintf(stderr, "prog-hostile: no stream of thread %d in /proc/self/maps\n",
			(int)gettid_());
		exit(3);
	}
	for (int i = 0; i < 10000 && !maps_inode(getppid(), ino); i++)
		usleep(1000);
	return m;
}

static int scribble_max(void)
{
	struct mine m;

	fire(0, 0);
	m = my_stream();
	for (uint32_t i = 0; i < m.h->slots; i++)
		__atomic_store_n(&m.d->slot[i].commit, 0, __ATOMIC_RELEASE);
	__atomic_store_n(m.produced, UINT64_MAX, __ATOMIC_RELEASE);
	printf("scribbled %d\n", (int)gettid_());
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

static int scribble_ahead(long n)
{
	struct mine m;

	for (long i = 0; i < n; i++)
		fire(0, (uint64_t)i);
	m = my_stream();
	__atomic_store_n(m.produced,
			 __atomic_load_n(m.produced, __ATOMIC_RELAXED) + (1ull << 40),
			 __ATOMIC_RELEASE);
	printf("scribbled %d\n", (int)gettid_());
	fflush(stdout);
	sleep(1);
	return 0;
}

static int scribble_lost(long n)
{
	struct mine m;

	for (long i = 0; i < n; i++)
		fire(0, (uint64_t)i);
	m = my_stream();
	m.d->lost_full = UINT64_MAX - 1;
	m.d->lost_big = 15328111131301311311ull;
	__atomic_store_n(&m.d->lost_nested, 1ull << 62, __ATOMIC_RELAXED);
	printf("scribbled %d\n", (int)gettid_());
	fflush(stdout);
	sleep(1);
	return 0;
}

static int scribble_class(long n)
{
	struct mine m;
	int status;
	pid_t child;

	fire(0, 0);
	m = my_stream();
	child = fork();
	if (child < 0)
		return 4;
	if (child == 0) {
		for (long i = 0; i < n; i++)
			fire(1, (uint64_t)i);
		_exit(0);
	}
	__atomic_store_n(&m.h->class_id, 77, __ATOMIC_RELAXED);
	for (long i = 1; i <= n; i++)
		fire(0, (uint64_t)i);
	printf("scribbled %d %d\n", (int)gettid_(), (int)child);
	fflush(stdout);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 5;
	return 0;
}

static int truncate_buffer(void)
{
	struct mine m;
	char path[128];
	int fd;

	fire(0, 0);
	m = my_stream();
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", m.lo, m.hi);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) < 0)
		printf("refused %d %s\n", (int)gettid_(), strerrorname_np(errno));
	else
		printf("truncated %d\n", (int)gettid_());
	fflush(stdout);
	if (fd >= 0)
		close(fd);
	sleep(1);
	return 0;
}

static void *one_event(void *arg)
{
	fire((uint32_t)(uintptr_t)arg, 0);
	return NULL;
}

static int threads(long n)
{
	char line[16];

	for (long i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, one_event, (void *)(uintptr_t)i) != 0 ||
		    pthread_join(th, NULL) != 0)
			return 4;
	}
	printf("done\n");
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) ? 0 : 0;
}

/* @n children, up to @at_once alive together: each fires one event and
 * exits. */
static int children(long n, long at_once)
{
	long ok = 0, started = 0, running = 0;

	if (at_once < 1)
		at_once = 1;
	while (started < n || running) {
		int status;

		if (started < n && running < at_once) {
			pid_t pid = fork();

			if (pid == 0) {
				fire((uint32_t)started, 0);
				_exit(0);
			}
			if (pid < 0)
				return 4;
			started++;
			running++;
			continue;
		}
		if (wait(&status) < 0)
			return 4;
		running--;
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	printf("done %ld\n", ok);
	return 0;
}

/* memfd_create fails with EPERM from now on (no_new_privs: unprivileged
 * too). */
static int deny_memfd(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -1;
	return 0;
}

/* memfd_create refused before the runtime starts: deny it, then run
 * this program again as "fire N" (the filter stays across exec). */
static int seccomp(char **argv)
{
	char *args[] = { argv[0], "fire", argv[2], NULL };

	if (deny_memfd() < 0) {
		perror("prog-hostile: seccomp");
		return 4;
	}
	execv("/proc/self/exe", args);
	perror("prog-hostile: exec");
	return 4;
}

static int fire_n(long n)
{
	for (long i = 0; i < n; i++)
		fire(0, (uint64_t)i);
	printf("fired %ld\n", n);
	return 0;
}

static int fork_first(void)
{
	char line[16];
	int status;
	pid_t pid;

	fire(0, 0);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 4;
	pid = fork();
	if (pid == 0) {
		struct rusage before, after;

		getrusage(RUSAGE_THREAD, &before);
		fire(1, 0);
		getrusage(RUSAGE_THREAD, &after);
		printf("child %d nvcsw %ld\n", (int)getpid(), after.ru_nvcsw - before.ru_nvcsw);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 4;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
}

static void *renamed_thread(void *arg)
{
	*(pid_t *)arg = gettid_();
	prctl(PR_SET_NAME, "plain");
	fire(1, 0);
	prctl(PR_SET_NAME, "\033[2Jz");
	fire(1, 1);
	return NULL;
}

static int names(void)
{
	pthread_t t;
	pid_t tid = 0;

	prctl(PR_SET_NAME, "\033]0;x\007");
	fire(0, 0);
	if (pthread_create(&t, NULL, renamed_thread, &tid) || pthread_join(t, NULL))
		return 4;
	printf("names %d %d\n", (int)gettid_(), (int)tid);
	return 0;
}

/* A connection of our own to the recorder, HELLO said; -1 if none. */
/* A second connection to the recorder, saying HELLO as process @pid
 * (0: its own). */
static int session_connect_as(uint32_t pid)
{
	const char *name = getenv(TK_SESSION_ENV);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct tk_msg_hello h = { .m = { TK_MSG_HELLO, sizeof(h) },
				  .version = TK_PROTOCOL_VERSION };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0 || !name || strlen(name) >= sizeof(sa.sun_path) - 1)
		return -1;
	memcpy(sa.sun_path + 1, name, strlen(name));
	if (connect(fd, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) < 0)
		return -1;
	h.pid = pid ? pid : (uint32_t)getpid();
	h.ppid = pid ? pid : (uint32_t)getppid();
	strcpy(h.comm, "hostile");
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != sizeof(h))
		return -1;
	return fd;
}

static int session_connect(void)
{
	return session_connect_as(0);
}

static int hellos(long n, long m)
{
	for (long i = 0; i < n; i++) {
		int fd = session_connect();

		if (fd < 0)
			return 4;
		close(fd);
	}
	for (long i = 0; i < m; i++)
		fire(0, (uint64_t)i);
	printf("fired %ld\n", m);
	return 0;
}

static int orphan(long n)
{
	pid_t pid = fork();

	if (pid < 0)
		return 4;
	if (pid > 0)
		return 0;
	usleep(200000); /* the parent is gone, its connection closed */
	for (long i = 0; i < n; i++)
		fire(0, (uint64_t)i);
	printf("child fired %ld\n", n);
	return 0;
}

static int errors(long n)
{
	struct tk_msg_error e = { { TK_MSG_ERROR, sizeof(e) }, "" };
	int fd = session_connect();

	if (fd < 0)
		return 4;
	for (long i = 0; i < n; i++) {
		snprintf(e.text, sizeof(e.text), "error %ld", i);
		if (send(fd, &e, sizeof(e), MSG_NOSIGNAL) != sizeof(e))
			return 4;
	}
	printf("sent %ld\n", n);
	close(fd);
	return 0;
}

/* One u32 field named @field, at @p (zeros, 256 bytes). */
static void descriptor(char *p, const char *field)
{
	struct tk_desc_head h = { .magic = TK_DESC_MAGIC, .version = TK_DESC_VERSION,
				  .nfields = 1, .size = 256 };
	struct tk_field_desc f = { .kind = TK_KIND_UINT, .size = 4 };
	uint16_t strings = sizeof(h) + sizeof(f);

	snprintf(f.name, sizeof(f.name), "%s", field);
	h.off_provider = strings;
	h.off_name = strings + 8;
	h.off_fmt = h.off_args = strings + 12;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), &f, sizeof(f));
	strcpy(p + h.off_provider, "hostile");
	strcpy(p + h.off_name, "bad");
}

static int event_id(uint32_t id, const char *field, uint32_t pid)
{
	struct { struct tk_msg_event m; char desc[256]; } ev;
	struct tk_msg done = { TK_MSG_EVENTS_DONE, sizeof(done) };
	struct tk_msg reply;
	int fd = session_connect_as(pid);

	memset(&ev, 0, sizeof(ev));
	ev.m.m = (struct tk_msg){ TK_MSG_EVENT, sizeof(ev) };
	ev.m.id = id;
	if (field)
		descriptor(ev.desc, field);
	if (fd < 0 || send(fd, &ev, sizeof(ev), MSG_NOSIGNAL) != sizeof(ev))
		return 4;
	send(fd, &done, sizeof(done), MSG_NOSIGNAL);
	printf("%s\n", recv(fd, &reply, sizeof(reply), 0) > 0 ? "kept" : "dropped");
	if (pid) {
		/* one event lost: the connection's process is in the trace
		 * (one that leaves nothing there is not) */
		struct tk_msg_nobuf nb = { { TK_MSG_NOBUF, sizeof(nb) }, ENOMEM, 0,
					   1, "hostile" };

		send(fd, &nb, sizeof(nb), MSG_NOSIGNAL);
	}
	close(fd);
	return 0;
}

/* The recorder's wake-up eventfd (lib/control.c tk_wake_fd), -1 if none. */
static int wake_fd(void)
{
	for (int fd = 3; fd < 1024; fd++) {
		char path[64], link[64];
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0 && (link[k] = '\0', strstr(link, "[eventfd]")))
			return fd;
	}
	return -1;
}

static int same_tid(long n)
{
	int wake;
	static const uint64_t one = 1;
	struct mine m;
	struct tk_rb_stream *d;
	uint64_t *produced;
	long r;

	fire(0, 0);
	m = my_stream();
	wake = wake_fd();
	/* descriptor 1: the recorder looks at the next few ones (touch_ahead) */
	d = (struct tk_rb_stream *)((char *)m.d + m.h->stream_size);
	produced = m.produced + 1;
	for (r = 0; r < n; r++) {
		struct tk_packet_header *ph = (struct tk_packet_header *)
			((char *)d + m.h->stream_size - TK_INLINE_SIZE);

		for (int i = 0; __atomic_load_n(&d->state, __ATOMIC_ACQUIRE) != TK_RB_FREE ||
				__atomic_load_n(produced, __ATOMIC_ACQUIRE); i++) {
			if (i == 100000)
				return 5;
			if (i % 16 == 0 && write(wake, &one, sizeof(one)) < 0)
				return 5;
			usleep(100);
		}
		memset(ph, 0, sizeof(*ph));
		ph->magic = TK_CTF_MAGIC;
		d->tid = 424242;
		strcpy(d->comm, "same");
		d->inline_busy = 1;
		d->slot[0].chunk = TK_CHUNK_INLINE;
		d->slot[0].commit = sizeof(*ph);
		__atomic_store_n(&d->slot[0].seq, 1, __ATOMIC_RELEASE);
		__atomic_store_n(produced, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&d->state, TK_RB_CLOSED, __ATOMIC_RELEASE);
		if (write(wake, &one, sizeof(one)) < 0)
			return 5;
	}
	printf("rounds %ld\n", r);
	return 0;
}

/* Whether process @pid is in ppoll (x86-64: 271), as
 * /proc/PID/syscall says. */
static bool in_ppoll(pid_t pid)
{
	char path[64], line[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (f && !fgets(line, sizeof(line), f))
		line[0] = '\0';
	if (f)
		fclose(f);
	return !strncmp(line, "271 ", 4);
}

static int close_wake(const char *file)
{
	uint64_t woke, n = 1;
	struct stat sb;
	struct mine m;
	int wake, fd;

	fire(0, 0);
	m = my_stream();
	wake = wake_fd();
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (wake < 0 || fd < 0 || close(wake) < 0 || dup2(fd, wake) != wake)
		return 4;
	close(fd);
	woke = __atomic_load_n(&m.h->wakeups, __ATOMIC_RELAXED);
	while (__atomic_load_n(&m.h->wakeups, __ATOMIC_RELAXED) == woke) {
		if (n == 50000000)
			return 5;
		fire(0, n++);
	}
	if (fstat(wake, &sb) < 0)
		return 4;
	printf("fired %llu size %lld\n", (unsigned long long)n, (long long)sb.st_size);
	return 0;
}

static int queue_first(void)
{
	struct tk_msg m = { TK_MSG_ERROR, sizeof(m) };
	pid_t rec = getppid();
	int fd, size = 64 << 20, queued = -1;
	uint64_t consumed, seq = 1;
	long sent = 0;
	struct mine me;

	fire(0, 0);
	me = my_stream();
	fd = session_connect();
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		return 4;
	usleep(100000); /* the recorder takes the connection */
	for (int i = 0;; i++) {
		if (i == 10000)
			return 5;
		kill(rec, SIGSTOP);
		if (in_ppoll(rec))
			break;
		kill(rec, SIGCONT);
		usleep(1000);
	}
	consumed = __atomic_load_n(&me.d->consumed, __ATOMIC_ACQUIRE);
	while (__atomic_load_n(me.produced, __ATOMIC_ACQUIRE) < consumed + 2)
		fire(0, seq++);
	while (send(fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(m))
		sent += sizeof(m);
	usleep(100000); /* the closed packets are overdue */
	kill(rec, SIGCONT);
	for (long i = 0; __atomic_load_n(&me.d->consumed, __ATOMIC_ACQUIRE) == consumed; i++)
		if (i == 3000000000L)
			return 5;
	if (ioctl(fd, SIOCOUTQ, &queued) < 0)
		return 4;
	printf("queued %d of %ld\n", queued, sent);
	return 0;
}

static int sealed_memfd(size_t size)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		return -1;
	return fd;
}

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* An arena laid out as lib/arena.c lays one out, of the geometry the
 * CONFIG @c asks but for a pool of @chunks, every descriptor in the
 * fresh ring; its memfds in fds[].  NULL if it cannot be made. */
static struct tk_arena *own_arena(const struct tk_msg_config *c, uint32_t chunks,
				  int fds[2])
{
	uint32_t ring = 1;
	struct tk_arena *h;
	size_t csize;

	while (ring < chunks || ring < c->streams_max)
		ring <<= 1;
	csize = tk_arena_control_size(ring, c->streams_max, c->slots);
	fds[0] = sealed_memfd(csize);
	fds[1] = sealed_memfd((size_t)chunks * c->chunk_size);
	if (fds[0] < 0 || fds[1] < 0)
		return NULL;
	h = mmap(NULL, csize, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (h == MAP_FAILED)
		return NULL;
	*h = (struct tk_arena){ .magic = TK_ARENA_MAGIC, .version = TK_ARENA_VERSION,
				.pid = (uint32_t)getpid(), .mode = c->mode,
				.chunk_size = c->chunk_size, .slots = c->slots,
				.streams_max = c->streams_max, .ring_size = ring,
				.stream_size = tk_rb_stream_size(c->slots),
				.chunks_max = chunks, .control_size = csize };
	h->chunk_ring = page_up(sizeof(*h));
	h->stream_ring = h->chunk_ring + page_up((size_t)ring * 4);
	h->recycle_ring = h->stream_ring + page_up((size_t)ring * 4);
	h->produced = h->recycle_ring + page_up((size_t)ring * 4);
	h->streams = h->produced + page_up((size_t)c->streams_max * 8);
	for (uint32_t i = 0; i < c->streams_max; i++)
		((uint32_t *)((char *)h + h->stream_ring))[i] = i;
	h->free_streams.tail = c->streams_max;
	return h;
}

/* Our own connection's EVENTS_DONE, and the CONFIG it is answered with
 * into buf[TK_MSG_MAX]; -1 if it is not. */
static int own_config(int fd, char *buf)
{
	struct tk_msg done = { TK_MSG_EVENTS_DONE, sizeof(done) };

	return fd >= 0 && send(fd, &done, sizeof(done), MSG_NOSIGNAL) == sizeof(done) &&
	       recv(fd, buf, TK_MSG_MAX, 0) >= (ssize_t)sizeof(struct tk_msg_config) &&
	       ((struct tk_msg *)buf)->type == TK_MSG_CONFIG ? 0 : -1;
}

/* Hand the arena of fds[] over on @fd, @made chunks made. */
static int send_arena(int fd, const int fds[2], uint32_t made)
{
	struct tk_msg_arena am = { { TK_MSG_ARENA, sizeof(am) }, made, 0, 0 };
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { &am, sizeof(am) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, 2 * sizeof(int));
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == sizeof(am) ? 0 : -1;
}

static int big_arena(long mib)
{
	static char buf[TK_MSG_MAX];
	const struct tk_msg_config *c = (const void *)buf;
	int fd = session_connect(), fds[2];
	struct tk_arena *h;

	if (own_config(fd, buf) < 0 ||
	    !(h = own_arena(c, (uint32_t)(((uint64_t)mib << 20) / c->chunk_size), fds)) ||
	    send_arena(fd, fds, 2) < 0)
		return 4;
	/* no chunk free, ever: the recorder is asked to make more */
	for (int i = 0; i < 2000; i++) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		__atomic_store_n(&h->free_chunks.top, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->starved, 1, __ATOMIC_RELAXED);
		if (poll(&pfd, 1, 1) > 0 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == 0) {
			printf("dropped\n");
			return 0;
		}
	}
	printf("kept\n");
	return 0;
}

static int many_events(uint32_t nev, uint32_t ns)
{
	static char buf[TK_MSG_MAX];
	const struct tk_msg_config *c = (const void *)buf;
	struct { struct tk_msg_event m; char desc[256]; } ev;
	int fd = session_connect(), fds[2];
	struct tk_arena *h;
	char *pool;

	memset(&ev, 0, sizeof(ev));
	ev.m.m = (struct tk_msg){ TK_MSG_EVENT, sizeof(ev) };
	descriptor(ev.desc, "x");
	for (uint32_t i = 0; fd >= 0 && i < nev; i++) {
		ev.m.id = i;
		if (send(fd, &ev, sizeof(ev), MSG_NOSIGNAL) != sizeof(ev))
			return 4;
	}
	if (own_config(fd, buf) < 0 || ns > c->streams_max || ns > c->pool_max ||
	    !(h = own_arena(c, c->pool_max, fds)))
		return 4;
	pool = mmap(NULL, (size_t)ns * c->chunk_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fds[1], 0);
	if (pool == MAP_FAILED)
		return 4;
	/* streams 0 to ns-1 taken (the recorder looks a few beyond) */
	h->free_streams.head = ns;
	for (uint32_t s = 0; s < ns; s++) {
		struct tk_rb_stream *d = (struct tk_rb_stream *)
			((char *)h + h->streams + (size_t)s * h->stream_size);
		char *p = pool + (size_t)s * c->chunk_size;
		uint16_t id = (uint16_t)(nev - 1);
		uint32_t off = sizeof(struct tk_packet_header);

		((struct tk_packet_header *)p)->magic = TK_CTF_MAGIC;
		for (; off + 10 <= c->chunk_size; off += 10) {
			memcpy(p + off, &id, 2);      /* compact header: id, */
			memcpy(p + off + 2, &off, 4); /* time's low bits, */
			memcpy(p + off + 6, &s, 4);   /* x */
		}
		d->tid = 100000 + s;
		strcpy(d->comm, "many");
		d->slot[0] = (struct tk_rb_slot){ .seq = 1, .commit = off, .chunk = s };
		d->state = TK_RB_OPEN;
	}
	if (send_arena(fd, fds, c->pool_max) < 0)
		return 4;
	usleep(500000); /* the recorder sees the streams */
	printf("left\n");
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "scribble-max"))
		return scribble_max();
	if (!strcmp(argv[1], "scribble-ahead"))
		return scribble_ahead(n);
	if (!strcmp(argv[1], "scribble-lost"))
		return scribble_lost(n);
	if (!strcmp(argv[1], "scribble-class"))
		return scribble_class(n);
	if (!strcmp(argv[1], "truncate"))
		return truncate_buffer();
	if (!strcmp(argv[1], "threads"))
		return threads(n);
	if (!strcmp(argv[1], "children"))
		return children(n, argc > 3 ? atol(argv[3]) : 1);
	if (!strcmp(argv[1], "seccomp") && argc > 2)
		return seccomp(argv);
	if (!strcmp(argv[1], "fire"))
		return fire_n(n);
	if (!strcmp(argv[1], "fork-first"))
		return fork_first();
	if (!strcmp(argv[1], "names"))
		return names();
	if (!strcmp(argv[1], "errors"))
		return errors(n);
	if (!strcmp(argv[1], "hellos") && argc > 3)
		return hellos(n, atol(argv[3]));
	if (!strcmp(argv[1], "orphan"))
		return orphan(n);
	if (!strcmp(argv[1], "event-id"))
		return event_id((uint32_t)n, NULL, 0);
	if (!strcmp(argv[1], "event-field") && argc > 2)
		return event_id(100, argv[2], 0);
	if (!strcmp(argv[1], "hello-pid"))
		return event_id(100, "x", (uint32_t)n);
	if (!strcmp(argv[1], "same-tid"))
		return same_tid(n);
	if (!strcmp(argv[1], "close-wake") && argc > 2)
		return close_wake(argv[2]);
	if (!strcmp(argv[1], "queue-first"))
		return queue_first();
	if (!strcmp(argv[1], "many-events") && argc > 3)
		return many_events((uint32_t)n, (uint32_t)atol(argv[3]));
	if (!strcmp(argv[1], "big-arena"))
		return big_arena(n);
	return 2;
}
