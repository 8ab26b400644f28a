// What both libmicrohttpd floors (bench/floor.c, bench/waiters-floor.c) share: a daemon started
// with feed-server's HTTPDaemon flags and limits, and the wait for SIGTERM or SIGINT.
#ifndef FLOOR_DAEMON_H
#define FLOOR_DAEMON_H

#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

// Internal polling thread pool of `threads`, epoll, turbo, suspend/resume allowed, 16 KiB
// connection memory, backlog 1024; exits the process when the port cannot be had.
static struct MHD_Daemon *start_floor_daemon(const char *port, const char *threads, unsigned int timeout_seconds,
                                             unsigned int connections, MHD_AccessHandlerCallback handle) {
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_USE_TURBO
            | MHD_ALLOW_SUSPEND_RESUME,
        (uint16_t)atoi(port), NULL, NULL, handle, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)atoi(threads),
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_LIMIT, connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 << 10),
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "cannot listen on port %s\n", port);
        exit(1);
    }
    return daemon;
}

// Blocks until SIGTERM or SIGINT.
static void wait_for_termination(void) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    int received;
    sigwait(&signals, &received);
}

#endif
