#ifndef INKY_CJXL_SHIM_H
#define INKY_CJXL_SHIM_H
#include <jxl/decode.h>
#endif
