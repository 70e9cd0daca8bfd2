#ifndef INKY_CVIPS_SHIM_H
#define INKY_CVIPS_SHIM_H
/* libvips' types and constants only: nothing links libvips. The worker loads it when it converts
 * pages, and calls it through CInkyVips (inky_vips.h says why). */
#include <vips/vips.h>
#endif
