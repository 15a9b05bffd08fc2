// version_edge_copies: a lowered 2-deep parallel nest (a tile copy in or out, an element-wise
// pass over a tile) whose bounds guards test its inner index runs those guards once per nest
// instead of once per element, where the whole inner range is in bounds. The guards of a ragged
// tile stay per element only in the blocks at the edge; elsewhere the code generator's vector
// loop needs no masked loads or stores (vmaskmovps: a microcoded store on AMD Zen 2/3, 4–8× a
// plain one; the copy out of 1000×777×333 in 96×128×128 tiles was 12% of the kernel's samples).
//
//   for c0 in parallel(0 +: 96) { for c1 in parallel(0 +: 128) {
//     if by*96 + c0 < 1000 && bx*128 + c1 < 777 { C[by*96 + c0, bx*128 + c1] = C_local[c0, c1] } } }
// → if bx*128 + 127 < 777 {
//     for c0 in parallel(0 +: 96) { for c1 in parallel(0 +: 128) {
//       if by*96 + c0 < 1000 { C[by*96 + c0, bx*128 + c1] = C_local[c0, c1] } } }
//   } else { the nest as it was }
//
// A guard term is versioned when it is a comparison linear in the inner index alone (`<`, `<=`
// with a positive coefficient hold on the whole range when they hold at its last value; `>`,
// `>=` when they hold at its first) and mentions no variable bound inside the nest: the outer
// index's terms (the rows) are one branch per row already. Guards are the conditions of Ifs and
// Selects in the nest's body, split at `&&`. Results are unchanged: the fast branch runs only
// where the dropped terms are true for every element. Last in the cpu pipeline (after
// insert_prefetches, which reads the copies' nests).
#pragma once
#include "tilegen/ir/function.h"

namespace tg::cpu {

Function version_edge_copies(const Function& f);

}  // namespace tg::cpu
