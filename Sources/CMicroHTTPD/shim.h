#include "microhttpd.h"
