#include "CVipsTesting.h"
#include <vips/vips.h>
#include <string.h>

// Builds a band from x and y: scale_x * x + scale_y * y + offset, as float.
static VipsImage *gradient_band(VipsImage *x, VipsImage *y, double scale_x, double scale_y, double offset) {
    VipsImage *a = NULL, *b = NULL, *sum = NULL;
    if (vips_linear1(x, &a, scale_x, offset, NULL) != 0) return NULL;
    if (vips_linear1(y, &b, scale_y, 0.0, NULL) != 0) { g_object_unref(a); return NULL; }
    int status = vips_add(a, b, &sum, NULL);
    g_object_unref(a);
    g_object_unref(b);
    return status == 0 ? sum : NULL;
}

// The other pixel layouts a user can upload, made from the sRGB test image: 3 grey, 4 grey +
// alpha, 5 16-bit grey, 6 16-bit RGB, 7 RGB in Display P3 with the profile attached (libvips'
// built-in "p3"). Takes its own reference; returns a memory image or NULL.
static VipsImage *test_image_variant(VipsImage *rgb, int kind) {
    VipsImage *out = NULL, *step = NULL, *alpha = NULL;
    int status = -1;
    switch (kind) {
    case 3: status = vips_colourspace(rgb, &out, VIPS_INTERPRETATION_B_W, NULL); break;
    case 4:
        if (vips_colourspace(rgb, &step, VIPS_INTERPRETATION_B_W, NULL) == 0 &&
            vips_extract_band(rgb, &alpha, 1, NULL) == 0) {
            status = vips_bandjoin2(step, alpha, &out, NULL);
        }
        break;
    case 5: status = vips_colourspace(rgb, &out, VIPS_INTERPRETATION_GREY16, NULL); break;
    case 6: status = vips_colourspace(rgb, &out, VIPS_INTERPRETATION_RGB16, NULL); break;
    case 7: status = vips_icc_transform(rgb, &out, "p3", "input_profile", "srgb", "embedded", FALSE, NULL); break;
    }
    if (step) g_object_unref(step);
    if (alpha) g_object_unref(alpha);
    if (status != 0 || !out) return NULL;
    VipsImage *memory = vips_image_copy_memory(out);
    g_object_unref(out);
    return memory;
}

CVips_Image *CVipsTesting_make_test_image(int width, int height, int kind) {
    VipsImage *xyz = NULL, *x = NULL, *y = NULL, *noise = NULL;
    if (vips_xyz(&xyz, width, height, NULL) != 0) return NULL;
    vips_extract_band(xyz, &x, 0, NULL);
    vips_extract_band(xyz, &y, 1, "n", 1, NULL);
    vips_gaussnoise(&noise, width, height, "sigma", 12.0, "mean", 0.0, NULL);
    int bands = kind == 2 ? 4 : 3;
    VipsImage *channels[5] = {0};
    for (int band = 0; band < bands; band++) {
        double sx = (band % 2 == 0 ? 200.0 : 60.0) / width;
        double sy = (band % 2 == 0 ? 40.0 : 180.0) / height;
        VipsImage *base = gradient_band(x, y, sx, sy, 10.0 * band);
        VipsImage *noisy = NULL;
        vips_add(base, noise, &noisy, NULL);
        g_object_unref(base);
        channels[band] = noisy;
    }
    if (kind == 1) {
        VipsImage *mask = NULL;
        vips_relational_const1(x, &mask, VIPS_OPERATION_RELATIONAL_LESS, width / 2.0, NULL);
        channels[bands++] = mask;
    }
    VipsImage *joined = NULL, *uchar = NULL;
    vips_bandjoin(channels, &joined, bands, NULL);
    for (int band = 0; band < bands; band++) g_object_unref(channels[band]);
    vips_cast_uchar(joined, &uchar, NULL);
    g_object_unref(joined);
    g_object_unref(xyz);
    g_object_unref(x);
    g_object_unref(y);
    g_object_unref(noise);
    if (!uchar) return NULL;
    VipsImage *tagged = NULL;
    VipsInterpretation interpretation = kind == 2 ? VIPS_INTERPRETATION_CMYK : VIPS_INTERPRETATION_sRGB;
    vips_copy(uchar, &tagged, "interpretation", interpretation, NULL);
    g_object_unref(uchar);
    VipsImage *memory = vips_image_copy_memory(tagged);
    g_object_unref(tagged);
    if (!memory) return NULL;
    // A solid marker in the top-left corner tells which way the image was turned.
    int side = (width < height ? width : height) / 4;
    double red_rgb[4] = {255.0, 0.0, 0.0, 255.0};
    double red_cmyk[4] = {0.0, 255.0, 255.0, 0.0};
    vips_draw_rect(memory, kind == 2 ? red_cmyk : red_rgb, bands, 0, 0, side, side, "fill", TRUE, NULL);
    if (kind <= 2) return (CVips_Image *)memory;
    VipsImage *variant = test_image_variant(memory, kind);
    g_object_unref(memory);
    return (CVips_Image *)variant;
}

int CVipsTesting_save(CVips_Image *image, const char *suffix, void **out, size_t *length) {
    return vips_image_write_to_buffer((VipsImage *)image, suffix, out, length, NULL);
}

CVips_Image *CVipsTesting_decode(const void *buffer, size_t length) {
    VipsImage *image = vips_image_new_from_buffer(buffer, length, "", NULL);
    if (!image) return NULL;
    VipsImage *memory = vips_image_copy_memory(image);
    g_object_unref(image);
    return (CVips_Image *)memory;
}

int CVipsTesting_thumbnail_equals(const void *buffer, size_t length, int max_dimension, int managed) {
    VipsImage *ours = (VipsImage *)CVips_thumbnail(buffer, length, max_dimension);
    VipsImage *theirs = NULL;
    int status = managed
        ? vips_thumbnail_buffer((void *)buffer, length, &theirs, max_dimension, "height", max_dimension,
                                "export_profile", "srgb", NULL)
        : vips_thumbnail_buffer((void *)buffer, length, &theirs, max_dimension, "height", max_dimension, NULL);
    int result = -1;
    size_t ours_length = 0, theirs_length = 0;
    void *ours_pixels = ours ? vips_image_write_to_memory(ours, &ours_length) : NULL;
    void *theirs_pixels = status == 0 ? vips_image_write_to_memory(theirs, &theirs_length) : NULL;
    if (ours_pixels && theirs_pixels) {
        result = ours_length == theirs_length && memcmp(ours_pixels, theirs_pixels, ours_length) == 0;
    }
    g_free(ours_pixels);
    g_free(theirs_pixels);
    if (ours) g_object_unref(ours);
    if (theirs) g_object_unref(theirs);
    return result;
}
