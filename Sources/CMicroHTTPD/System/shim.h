// Pulls in libmicrohttpd's public header; it needs the POSIX socket types first.
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>
