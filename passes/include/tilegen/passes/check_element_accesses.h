// check_element_accesses: with --param check_bounds=all, every element load and store whose
// index the range analysis cannot prove in range is checked at run time, and an out-of-range one
// is reported (access_check.h) instead of performed.
//
// Before (Y: f32[64], threads(128) -> tx; X: i32[1]):
//   Y[tx] = 1
//   S[X[0]] = 2
// After (the function gains the parameter tg_access_record: u32[21] global):
//   if access_check(tx < 64, store "Y"[tx] of [64], (bx; tx), 0, "user.cpp:12") { Y[tx] = 1 }
//   if access_check(0 <= X[0] && X[0] < 4, store "S"[X[0]] of [4], (bx; tx), 1, "user.cpp:13") { S[X[0]] = 2
//   }
// and a load that is not proven becomes select(access_check(...), X[i], 0): nothing out of range
// is read (select is lazy on every target) and the first failure of the launch is what the host
// reports, as "user.cpp:12: out-of-range store to Y[64] (shape {64}) by block 0 thread 64".
//
// Why a pass: the check is IR, so `tilegen ir --after check_element_accesses` shows it, the
// interpreter executes it, and each target only translates AccessCheck. It runs where the IR has
// its final element accesses and still knows its threads: last on the GPU targets, before
// serialize_threads on cpu. Inside a parallel loop or a collective statement the block acts as a
// whole, and the thread is reported as -1. Off by default: the checks cost a compare per access.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function check_element_accesses(const Function& f, const TargetInfo& info);

}  // namespace tg
