// mma.h — what `#include <mma.h>` finds in the emulator (students' RawKernels are compiled
// with cuda/emu on the include path): the warp matrix functions of wmma_emu.h.
#pragma once
#include "wmma_emu.h"
