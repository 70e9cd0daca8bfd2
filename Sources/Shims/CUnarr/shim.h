#ifndef INKY_CUNARR_SHIM_H
#define INKY_CUNARR_SHIM_H
#include <unarr.h>
#endif
