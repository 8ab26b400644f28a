#ifndef CVIPS_H
#define CVIPS_H

#include <stddef.h>

/// An image held by libvips (a `VipsImage`, reference owned by whoever received it).
typedef struct CVips_Image CVips_Image;

/// What the header of an encoded image says, read without decoding pixels.
typedef struct {
    int width;
    int height;
    int bands;
    int orientation;      ///< EXIF orientation 1...8 (1 when absent).
    int has_exif;         ///< 1 when EXIF data is attached.
    int is_cmyk;          ///< 1 for CMYK images.
    int has_alpha;        ///< 1 when the image has an alpha band.
    const char *loader;   ///< libvips loader nickname (static string), e.g. "jpegload_buffer".
} CVips_Header;

/// Starts libvips once (`vips_init`), turns its operation cache off, and blocks every loader
/// except JPEG, PNG, WebP and HEIF (`vips_operation_block_set`). Returns 0 on success.
///
/// Exists because `VIPS_INIT` is a macro and the block list must be set before any load.
int CVips_init(void);

/// Empties libvips' process-wide error buffer (`vips_error_clear`).
void CVips_clear_error(void);

/// The text of libvips' error buffer (malloc'd, free with `CVips_free_string`) and clears it.
char *CVips_take_error(void);

/// Frees a string from `CVips_take_error`.
void CVips_free_string(char *text);

/// Reads an encoded image's header (lazy `vips_image_new_from_buffer`): no pixels are decoded,
/// so a decompression bomb costs only its header. Returns 0 on success.
///
/// Exists because `vips_image_new_from_buffer` is variadic.
int CVips_read_header(const void *buffer, size_t length, CVips_Header *header);

/// `CVips_read_header` for a file (`vips_image_new_from_file`, lazy: no pixels decoded).
int CVips_read_header_file(const char *path, CVips_Header *header);

/// `CVips_thumbnail` for a file (`vips_thumbnail`): shrink-on-load reads from disk, so a large
/// upload is never held in memory whole.
CVips_Image *CVips_thumbnail_file(const char *path, int max_dimension);

/// Decodes with shrink-on-load and resizes so the long side is at most `max_dimension`
/// (`vips_thumbnail_buffer`, never upsizing), applies the EXIF orientation, converts to sRGB
/// (keeping alpha), and copies the result to memory so it can be saved more than once.
/// NULL on error (see `CVips_take_error`).
///
/// Exists because `vips_thumbnail_buffer` and `vips_colourspace` are variadic.
CVips_Image *CVips_thumbnail(const void *buffer, size_t length, int max_dimension);

/// Width of an image in pixels.
int CVips_image_width(const CVips_Image *image);
/// Height of an image in pixels.
int CVips_image_height(const CVips_Image *image);
/// Number of bands (3 RGB, 4 RGBA or CMYK, 1 grey, 2 grey + alpha).
int CVips_image_bands(const CVips_Image *image);
/// 1 when the image has an alpha band.
int CVips_image_has_alpha(const CVips_Image *image);

/// Encodes as baseline JPEG at `quality`, all metadata stripped (`vips_jpegsave_buffer`).
/// `progressive` 1 writes an interlaced JPEG (tests use it to make progressive sources).
/// The buffer is freed with `CVips_free_buffer`. Returns 0 on success.
int CVips_save_jpeg(CVips_Image *image, int quality, int progressive, int strip, void **out, size_t *length);

/// Encodes as PNG (alpha kept; 16 bits per band when the image has them) with
/// `vips_pngsave_buffer`; `strip` 0 keeps metadata and the ICC profile (tests make sources
/// with it), `palette` 1 writes an 8-bit palette PNG (libimagequant). Returns 0 on success.
int CVips_save_png(CVips_Image *image, int strip, int palette, void **out, size_t *length);

/// Frees a buffer returned by a save function (`g_free`).
void CVips_free_buffer(void *buffer);

/// Drops a reference to an image (`g_object_unref`).
void CVips_image_free(CVips_Image *image);

/// Reads one pixel (`vips_getpoint`) into `values` (up to 4 bands). Returns bands read, or -1.
int CVips_pixel(CVips_Image *image, int x, int y, double values[4]);

#endif
