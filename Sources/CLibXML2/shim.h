#include "libxml/HTMLparser.h"
