#ifndef CVIPS_TESTING_H
#define CVIPS_TESTING_H

// Synthetic images for tests and benchmarks, made by libvips: no binary fixtures needed. Not
// linked into the server.

#include <stddef.h>
#include "CVips.h"

/// Makes a synthetic test image: a smooth gradient with fine noise (photo-like, so encoders
/// work as hard as on a photo) and a solid red square in the top-left quarter of the long side
/// (to check orientation). `kind`: 0 sRGB, 1 sRGB + alpha (transparent right half), 2 CMYK,
/// 3 grey, 4 grey + alpha, 5 16-bit grey, 6 16-bit RGB, 7 Display P3 with its ICC profile attached.
CVips_Image *CVipsTesting_make_test_image(int width, int height, int kind);

/// Encodes in the format `suffix` names (".webp", ".heic", ...) with libvips' defaults, for
/// inputs the server converts; `*out` is g_malloc'd. Returns 0 on success.
int CVipsTesting_save(CVips_Image *image, const char *suffix, void **out, size_t *length);

/// Decodes an encoded image completely (tests compare pixels after a round trip).
CVips_Image *CVipsTesting_decode(const void *buffer, size_t length);

/// Whether the server's thumbnail of an encoded image (`CVips_thumbnail`) has exactly the pixels of
/// libvips' own thumbnail with colour management on (`managed`: export_profile=srgb) or off.
/// Returns 1 for the same pixels, 0 for others, -1 when either cannot be made.
int CVipsTesting_thumbnail_equals(const void *buffer, size_t length, int max_dimension, int managed);

#endif
