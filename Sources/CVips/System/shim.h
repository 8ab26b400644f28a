// libvips' public header, for the C shim only (Swift code talks to CVips.h).
#include <vips/vips.h>
