// The libmicrohttpd floor for the read benchmarks (bench/read-vs-nginx.sh): the least work any
// server on libmicrohttpd 0.9.75 can do to answer a cached read. It serves one file's bytes at
// every path, with the headers feed-server sends on a cached read, from two responses prepared
// once (a 200 and a 304) and queued on the handler's second call, as feed-server does.
//
// Same daemon flags, pool and limits as feed-server's HTTPDaemon (internal polling thread pool,
// epoll, turbo, suspend/resume allowed, 16 KiB connection memory, 1024 connections, 30 s timeout,
// backlog 1024).
//
// With an asset (ASSET, ASSET_ETAG), paths under /assets/ get that file the way libmicrohttpd sends
// files by itself (MHD_create_response_from_fd: the header sent and pushed alone, then sendfile),
// with the headers feed-server sends on an asset: the floor for asset reads.
//
// Build: cc -O2 -o floor bench/floor.c -lmicrohttpd
// Run:   floor PORT THREADS FILE ETAG GENERATION [ASSET ASSET_ETAG]
#include "floor-daemon.h"
#include <microhttpd.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct MHD_Response *ok;
static struct MHD_Response *not_modified;
static struct MHD_Response *asset;
static const char *etag;

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_size, void **state) {
    (void)cls; (void)method; (void)version; (void)upload_data;
    static int marker;
    if (*state == NULL) {  // First call: the head only; answer on the next one (keeps keep-alive).
        *state = &marker;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (asset != NULL && strncmp(url, "/assets/", 8) == 0) return MHD_queue_response(connection, MHD_HTTP_OK, asset);
    const char *sent = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    if (sent != NULL && strcmp(sent, etag) == 0) return MHD_queue_response(connection, MHD_HTTP_NOT_MODIFIED, not_modified);
    return MHD_queue_response(connection, MHD_HTTP_OK, ok);
}

static void add_headers(struct MHD_Response *response, const char *generation) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, etag);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(response, "X-Feed-Generation", generation);
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 8) {
        fprintf(stderr, "usage: %s PORT THREADS FILE ETAG GENERATION [ASSET ASSET_ETAG]\n", argv[0]);
        return 2;
    }
    int fd = open(argv[3], O_RDONLY);
    struct stat status;
    if (fd < 0 || fstat(fd, &status) != 0) {
        perror(argv[3]);
        return 1;
    }
    char *body = malloc((size_t)status.st_size);
    if (body == NULL || read(fd, body, (size_t)status.st_size) != status.st_size) {
        perror("read");
        return 1;
    }
    close(fd);
    etag = argv[4];
    ok = MHD_create_response_from_buffer((size_t)status.st_size, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(ok, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    add_headers(ok, argv[5]);
    not_modified = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    add_headers(not_modified, argv[5]);
    if (argc == 8) {
        int asset_fd = open(argv[6], O_RDONLY);
        struct stat asset_status;
        if (asset_fd < 0 || fstat(asset_fd, &asset_status) != 0) {
            perror(argv[6]);
            return 1;
        }
        asset = MHD_create_response_from_fd((uint64_t)asset_status.st_size, asset_fd);
        MHD_add_response_header(asset, MHD_HTTP_HEADER_CONTENT_TYPE, "image/jpeg");
        MHD_add_response_header(asset, MHD_HTTP_HEADER_ETAG, argv[7]);
        MHD_add_response_header(asset, MHD_HTTP_HEADER_CACHE_CONTROL, "public, max-age=31536000, immutable");
        MHD_add_response_header(asset, "X-Content-Type-Options", "nosniff");
    }

    struct MHD_Daemon *daemon = start_floor_daemon(argv[1], argv[2], 30, 1024, handle);
    wait_for_termination();
    MHD_stop_daemon(daemon);
    MHD_destroy_response(ok);
    MHD_destroy_response(not_modified);
    if (asset != NULL) MHD_destroy_response(asset);
    free(body);
    return 0;
}
