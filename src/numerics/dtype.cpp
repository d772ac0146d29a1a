#include "numerics/dtype.h"
