/*
 * types.c - the types front (being written).
 */
#include "types.h"
