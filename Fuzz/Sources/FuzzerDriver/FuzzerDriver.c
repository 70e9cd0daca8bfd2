// Declarations only (see include/FuzzerDriver.h); SwiftPM needs one source file per C target.
#include "FuzzerDriver.h"
