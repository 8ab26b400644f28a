#include "CVips.h"
#include <vips/vips.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status = -1;

static void init_vips(void) {
    if (VIPS_INIT("feed-server") != 0) {
        init_status = -1;
        return;
    }
    // Requests are independent: an operation cache only holds memory between them.
    vips_cache_set_max(0);
    // Decode only what a widget asset can be, or what a phone's camera and the web hand over
    // (HEIC, the iPhone camera's default, through libheif; WebP). Everything else (TIFF, SVG,
    // PDF, the ImageMagick bridge, ...) is refused before any of its code sees a byte. A loader
    // this libvips lacks (a build without libheif) stays absent: its images are refused as unknown.
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpeg", FALSE);
    vips_operation_block_set("VipsForeignLoadPng", FALSE);
    vips_operation_block_set("VipsForeignLoadWebp", FALSE);
    vips_operation_block_set("VipsForeignLoadHeif", FALSE);
    init_status = 0;
}

int CVips_init(void) {
    pthread_once(&init_once, init_vips);
    return init_status;
}

void CVips_clear_error(void) { vips_error_clear(); }

char *CVips_take_error(void) {
    // Copied and cleared in one step under libvips' own lock: a thread appending meanwhile can
    // neither tear the copy nor have its text cleared unread.
    char *owned = vips_error_buffer_copy();
    char *copy = strdup(owned ? owned : "");
    g_free(owned);
    // libvips ends messages with a newline; callers embed them in sentences.
    size_t length = strlen(copy);
    while (length > 0 && (copy[length - 1] == '\n' || copy[length - 1] == ' ')) copy[--length] = 0;
    return copy;
}

void CVips_free_string(char *text) { free(text); }

static int fill_header(VipsImage *image, const char *loader, CVips_Header *header) {
    header->width = vips_image_get_width(image);
    header->height = vips_image_get_height(image);
    header->bands = vips_image_get_bands(image);
    header->orientation = vips_image_get_orientation(image);
    header->has_exif = vips_image_get_typeof(image, VIPS_META_EXIF_NAME) != 0;
    header->is_cmyk = vips_image_guess_interpretation(image) == VIPS_INTERPRETATION_CMYK;
    header->has_alpha = vips_image_hasalpha(image);
    header->loader = loader;
    g_object_unref(image);
    return 0;
}

int CVips_read_header(const void *buffer, size_t length, CVips_Header *header) {
    const char *loader = vips_foreign_find_load_buffer(buffer, length);
    if (!loader) return -1;
    VipsImage *image = vips_image_new_from_buffer(buffer, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) return -1;
    return fill_header(image, loader, header);
}

int CVips_read_header_file(const char *path, CVips_Header *header) {
    const char *loader = vips_foreign_find_load(path);
    if (!loader) return -1;
    VipsImage *image = vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) return -1;
    return fill_header(image, loader, header);
}

// Replaces *image with result (dropping the old reference); returns 0 when result is non-NULL.
static int replace(VipsImage **image, VipsImage *result, int status) {
    if (status != 0 || !result) return -1;
    g_object_unref(*image);
    *image = result;
    return 0;
}

// The thumbnail as 8-bit sRGB in memory (takes the thumbnail's reference); NULL on error.
static CVips_Image *finish_thumbnail(VipsImage *image) {
    // Each call runs before `replace` reads `next`: C leaves the order in which function
    // arguments are evaluated unspecified, so the call must not sit in the same argument list.
    VipsImage *next = NULL;
    int status = 0;
    if (image->Type != VIPS_INTERPRETATION_sRGB) {
        // Grey (B_W, GREY16), 16-bit RGB (RGB16) and any other space become 8-bit-ready sRGB;
        // an alpha band is carried along.
        status = vips_colourspace(image, &next, VIPS_INTERPRETATION_sRGB, NULL);
        if (replace(&image, next, status) != 0) goto fail;
    }
    if (image->BandFmt != VIPS_FORMAT_UCHAR) {
        next = NULL;
        status = vips_cast_uchar(image, &next, NULL);
        if (replace(&image, next, status) != 0) goto fail;
    }
    // A thumbnail is a lazy pipeline that can be evaluated once; a memory copy can be saved
    // as often as the budget needs (several qualities).
    VipsImage *memory = vips_image_copy_memory(image);
    g_object_unref(image);
    return (CVips_Image *)memory;
fail:
    g_object_unref(image);
    return NULL;
}

// Whether a thumbnail of `header` (an image opened lazily: only its header was read) needs
// export_profile=srgb, which turns colour management on: an embedded ICC
// profile (Display P3 from an iPhone, Adobe RGB from a camera) is honoured, and CMYK is converted
// with libvips' built-in CMYK profile. Without it libvips ignores the profile and reads the numbers
// as if they were sRGB, which is right for an RGB image without one: it is taken as sRGB, and a
// transform from sRGB to sRGB would cost about 12 % of the thumbnail in lcms and move some values
// by rounding. Takes the header's reference.
static int needs_colour_management(VipsImage *header) {
    int needed = vips_image_get_typeof(header, VIPS_META_ICC_NAME) != 0 || header->Type == VIPS_INTERPRETATION_CMYK;
    g_object_unref(header);
    return needed;
}

// Same box for width and height: the long side ends at max_dimension, aspect kept. The EXIF
// orientation is applied (libvips' default), shrink-on-load is automatic. fail_on=truncated: a
// cut-off upload is an error, not an image padded with grey. Colour: needs_colour_management.
CVips_Image *CVips_thumbnail(const void *buffer, size_t length, int max_dimension) {
    VipsImage *image = NULL;
    // An unreadable header fails here, with the loader's text, as the thumbnail's own load would.
    VipsImage *header = vips_image_new_from_buffer(buffer, length, "", NULL);
    if (!header) return NULL;
    int status = needs_colour_management(header)
        ? vips_thumbnail_buffer((void *)buffer, length, &image, max_dimension, "height", max_dimension, "size",
                                VIPS_SIZE_DOWN, "export_profile", "srgb", "option_string", "fail_on=truncated", NULL)
        : vips_thumbnail_buffer((void *)buffer, length, &image, max_dimension, "height", max_dimension, "size",
                                VIPS_SIZE_DOWN, "option_string", "fail_on=truncated", NULL);
    if (status != 0) return NULL;
    return finish_thumbnail(image);
}

CVips_Image *CVips_thumbnail_file(const char *path, int max_dimension) {
    // fail_on as the thumbnail's own option: libvips 8.14 ignores load options written into the
    // file name here ("path[fail_on=truncated]"), and would pad a cut-off file with grey.
    VipsImage *image = NULL;
    VipsImage *header = vips_image_new_from_file(path, NULL);
    if (!header) return NULL;
    int status = needs_colour_management(header)
        ? vips_thumbnail(path, &image, max_dimension, "height", max_dimension, "size", VIPS_SIZE_DOWN,
                         "fail_on", VIPS_FAIL_ON_TRUNCATED, "export_profile", "srgb", NULL)
        : vips_thumbnail(path, &image, max_dimension, "height", max_dimension, "size", VIPS_SIZE_DOWN, "fail_on",
                         VIPS_FAIL_ON_TRUNCATED, NULL);
    if (status != 0) return NULL;
    return finish_thumbnail(image);
}

int CVips_image_width(const CVips_Image *image) { return vips_image_get_width((VipsImage *)image); }
int CVips_image_height(const CVips_Image *image) { return vips_image_get_height((VipsImage *)image); }
int CVips_image_bands(const CVips_Image *image) { return vips_image_get_bands((VipsImage *)image); }
int CVips_image_has_alpha(const CVips_Image *image) { return vips_image_hasalpha((VipsImage *)image); }

int CVips_save_jpeg(CVips_Image *source, int quality, int progressive, int strip, void **out, size_t *length) {
    VipsImage *image = (VipsImage *)source;
    g_object_ref(image);
    if (vips_image_hasalpha(image) && image->Type != VIPS_INTERPRETATION_CMYK) {
        // JPEG has no alpha: composite over white, as a widget background would show it.
        VipsArrayDouble *white = vips_array_double_newv(3, 255.0, 255.0, 255.0);
        VipsImage *flat = NULL;
        int status = vips_flatten(image, &flat, "background", white, NULL);
        vips_area_unref(VIPS_AREA(white));
        if (replace(&image, flat, status) != 0) {
            g_object_unref(image);
            return -1;
        }
    }
    int status = vips_jpegsave_buffer(image, out, length, "Q", quality, "strip", strip ? TRUE : FALSE,
                                      "optimize_coding", TRUE, "interlace", progressive ? TRUE : FALSE, NULL);
    g_object_unref(image);
    return status;
}

int CVips_save_png(CVips_Image *image, int strip, int palette, void **out, size_t *length) {
    return vips_pngsave_buffer((VipsImage *)image, out, length, "strip", strip ? TRUE : FALSE,
                               "palette", palette ? TRUE : FALSE, "compression", 6, NULL);
}

void CVips_free_buffer(void *buffer) { g_free(buffer); }

void CVips_image_free(CVips_Image *image) {
    if (image) g_object_unref((VipsImage *)image);
}

int CVips_pixel(CVips_Image *image, int x, int y, double values[4]) {
    double *vector = NULL;
    int count = 0;
    if (vips_getpoint((VipsImage *)image, &vector, &count, x, y, NULL) != 0) return -1;
    for (int i = 0; i < count && i < 4; i++) values[i] = vector[i];
    g_free(vector);
    return count;
}
