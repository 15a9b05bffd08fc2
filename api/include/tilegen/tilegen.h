// The whole public API of tilegen.
#pragma once
#include "tilegen/autotune.h"
#include "tilegen/builder.h"
#include "tilegen/ir/function.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/kernel_cache.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/plugin.h"
#include "tilegen/runtime.h"
