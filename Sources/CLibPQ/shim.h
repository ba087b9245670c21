#include "libpq-fe.h"
