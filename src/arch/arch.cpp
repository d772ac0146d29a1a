#include "arch/arch.h"
