// The upload floor of bench/images.sh: the least a libmicrohttpd server can do with the photo PUT
// that feed-server packs. It takes the same multipart/form-data body on the same daemon flags and
// limits, streams each file part to a file through libmicrohttpd's post processor (written in 32 KiB
// pieces, as feed-server writes them), and hands each part, once complete, to decode threads that
// do what bench/vips-threads.c does (vipsthumbnail's 512 px, JPEG Q80, stripped). It answers 200
// when the body has ended and every part is decoded.
//
// What it leaves out, and feed-server does not: hashing the upload, the budget, the lint, the
// generation folder and its fsyncs. So it measures what receiving the body over HTTP adds to
// decoding in one process, the limit for any server that takes photos in one request.
//
// usage: upload-floor PORT DECODE_THREADS OUTDIR (PORT 0: any free port, printed as `listening on port N`)
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vips/vips.h>

#include "floor-daemon.h"

#define MAX_PARTS 4096
#define PIECE (32 << 10)

static const char *outdir;

// The decode queue: part numbers, taken in order by the decode threads.
static int queued[MAX_PARTS];
static int queue_tail = 0, queue_head = 0, decoded = 0, failed = 0;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_changed = PTHREAD_COND_INITIALIZER;

static void enqueue(int part) {
    pthread_mutex_lock(&queue_lock);
    queued[queue_tail++] = part;
    pthread_cond_broadcast(&queue_changed);
    pthread_mutex_unlock(&queue_lock);
}

static void *decode(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        while (queue_head == queue_tail) pthread_cond_wait(&queue_changed, &queue_lock);
        int part = queued[queue_head++];
        pthread_mutex_unlock(&queue_lock);
        char in[4096], out[4096];
        snprintf(in, sizeof in, "%s/in-%d", outdir, part);
        snprintf(out, sizeof out, "%s/out-%d.jpg[Q=80,strip]", outdir, part);
        VipsImage *thumbnail = NULL;
        int ok = vips_thumbnail(in, &thumbnail, 512, "height", 512, "size", VIPS_SIZE_DOWN, NULL) == 0
                 && vips_image_write_to_file(thumbnail, out, NULL) == 0;
        if (thumbnail != NULL) g_object_unref(thumbnail);
        if (!ok) fprintf(stderr, "upload-floor: part %d: %s", part, vips_error_buffer());
        pthread_mutex_lock(&queue_lock);
        decoded++;
        if (!ok) failed++;
        pthread_cond_broadcast(&queue_changed);
        pthread_mutex_unlock(&queue_lock);
    }
    return NULL;
}

// One request's body: the post processor and the part being written.
struct Upload {
    struct MHD_PostProcessor *processor;
    int parts, fd;
    size_t part_bytes, buffered;
    char key[256], filename[256];
    char buffer[PIECE];
    int error;
};

static void flush_piece(struct Upload *upload) {
    size_t written = 0;
    while (written < upload->buffered) {
        ssize_t count = write(upload->fd, upload->buffer + written, upload->buffered - written);
        if (count < 0) {
            upload->error = 1;
            return;
        }
        written += (size_t)count;
    }
    upload->buffered = 0;
}

static void close_part(struct Upload *upload) {
    if (upload->fd < 0) return;
    flush_piece(upload);
    close(upload->fd);
    upload->fd = -1;
    enqueue(upload->parts - 1);
}

static enum MHD_Result piece(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                             const char *type, const char *encoding, const char *data, uint64_t offset, size_t size) {
    (void)kind, (void)key, (void)type, (void)encoding;
    struct Upload *upload = cls;
    if (filename == NULL) return MHD_YES;  // the payload field: not an image
    // A part starts when another field or file is named, or at offset 0 after the current part
    // got bytes (libmicrohttpd may announce a part with an empty piece at offset 0 first).
    int renamed = strncmp(upload->key, key, sizeof upload->key) != 0
                  || strncmp(upload->filename, filename, sizeof upload->filename) != 0;
    if (upload->fd < 0 || renamed || (offset == 0 && upload->part_bytes > 0)) {
        snprintf(upload->key, sizeof upload->key, "%s", key);
        snprintf(upload->filename, sizeof upload->filename, "%s", filename);
        close_part(upload);
        if (upload->parts == MAX_PARTS) return MHD_NO;
        char path[4096];
        snprintf(path, sizeof path, "%s/in-%d", outdir, upload->parts++);
        upload->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        upload->part_bytes = 0;
        if (upload->fd < 0) return MHD_NO;
    }
    upload->part_bytes += size;
    while (size > 0) {
        size_t take = size < PIECE - upload->buffered ? size : PIECE - upload->buffered;
        memcpy(upload->buffer + upload->buffered, data, take);
        upload->buffered += take;
        data += take;
        size -= take;
        if (upload->buffered == PIECE) flush_piece(upload);
    }
    return upload->error ? MHD_NO : MHD_YES;
}

static enum MHD_Result answer(struct MHD_Connection *connection, unsigned int status, const char *text) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **request) {
    (void)cls, (void)url, (void)version;
    if (strcmp(method, "PUT") != 0) return answer(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "PUT only\n");
    struct Upload *upload = *request;
    if (upload == NULL) {
        upload = calloc(1, sizeof *upload);
        upload->fd = -1;
        upload->processor = MHD_create_post_processor(connection, 64 << 10, piece, upload);
        if (upload->processor == NULL) return MHD_NO;
        *request = upload;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (MHD_post_process(upload->processor, upload_data, *upload_data_size) != MHD_YES) return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (MHD_destroy_post_processor(upload->processor) != MHD_YES) upload->error = 1;  // cut short
    close_part(upload);
    int parts = upload->parts, error = upload->error;
    free(upload);
    *request = NULL;
    // The whole floor serves one request at a time: waiting here holds only this thread.
    pthread_mutex_lock(&queue_lock);
    while (decoded < queue_tail) pthread_cond_wait(&queue_changed, &queue_lock);
    int bad = failed;
    queue_head = queue_tail = decoded = failed = 0;
    pthread_mutex_unlock(&queue_lock);
    if (error || bad) return answer(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "a part failed\n");
    static char text[64];
    snprintf(text, sizeof text, "%d parts\n", parts);
    return answer(connection, MHD_HTTP_OK, text);
}

int main(int argc, char **argv) {
    if (argc != 4 || VIPS_INIT(argv[0]) != 0) {
        fprintf(stderr, "usage: upload-floor PORT DECODE_THREADS OUTDIR\n");
        return 2;
    }
    int threads = atoi(argv[2]);
    if (threads < 1 || threads > 64) threads = 1;
    outdir = argv[3];
    pthread_t workers[64];
    for (int i = 0; i < threads; i++) pthread_create(&workers[i], NULL, decode, NULL);
    // One polling thread: the pool of feed-server's flags is for many connections, and this
    // serves one. Port 0 takes a free port, printed for the caller.
    struct MHD_Daemon *daemon = start_floor_daemon(argv[1], "0", 60, 64, handle);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("listening on port %u\n", info == NULL ? 0u : (unsigned)info->port);
    fflush(stdout);
    wait_for_termination();
    MHD_stop_daemon(daemon);
    return 0;
}
