/*
 * tunrelay: the plainest TUN relay there is, the floor the link's relay
 * is measured against. It is given the link's two TUN devices as file
 * descriptors 3 (near) and 4 (far) and copies every packet read from one
 * to the other as it is, virtio header and all: no pipe, no queue, no
 * timing, no Go runtime. BenchmarkRelayEcho runs it with
 * WIREBENCH_BARE_RELAY=/path/to/tunrelay and counts the CPU of its
 * threads from /proc, as it counts the link's own relay's.
 *
 *   2t  a thread a direction, each in a blocking read(2), then write(2)
 *   1t  one thread for both, poll(2) on the two, then read until EAGAIN
 *
 * cc -O2 -pthread -o tunrelay tunrelay.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char bufs[2][65536 + 64];

struct dir { int from, to; char *buf; };

static void *copy(void *arg) {
	struct dir *d = arg;
	for (;;) {
		ssize_t n = read(d->from, d->buf, sizeof bufs[0]);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		if (write(d->to, d->buf, n) < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EIO)
			return NULL;
	}
}

int main(int argc, char **argv) {
	int near = 3, far = 4;
	if (argc < 2 || (strcmp(argv[1], "1t") && strcmp(argv[1], "2t"))) {
		fprintf(stderr, "usage: tunrelay 1t|2t (near TUN on fd 3, far on fd 4)\n");
		return 2;
	}
	if (!strcmp(argv[1], "2t")) {
		for (int fd = 3; fd <= 4; fd++)
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		struct dir up = {far, near, bufs[0]}, down = {near, far, bufs[1]};
		pthread_t t;
		pthread_create(&t, NULL, copy, &up);
		copy(&down);
		return 0;
	}
	for (int fd = 3; fd <= 4; fd++)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	struct pollfd p[2] = {{far, POLLIN, 0}, {near, POLLIN, 0}};
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < 2; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			int from = p[i].fd, to = from == far ? near : far;
			ssize_t n;
			while ((n = read(from, bufs[0], sizeof bufs[0])) > 0)
				if (write(to, bufs[0], n) < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EIO)
					return 1;
		}
	}
}
