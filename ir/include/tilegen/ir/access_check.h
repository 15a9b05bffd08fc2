// The access record: where a launch with checked element accesses (AccessCheck, made by the
// pass check_element_accesses) writes its first out-of-range access, and the host code that
// turns it into the tg::Error every target reports:
//
//   words: {site + 1, block x, y, z, thread, index 0 low, high, index 1 low, high, ...}
//   → "user.cpp:12: out-of-range store to Y[128] (shape {64}) by block 0 thread 64"
//
// The record is a Global u32 tensor parameter of the lowered function (kAccessRecordName, the
// last parameter), allocated, zeroed and read back by the runtime around each launch. A target
// translates AccessCheck as: if cond is false and a compare-and-swap of word 0 from 0 to
// site + 1 succeeds, store the other words (two's complement, indices as 64-bit little-endian
// pairs). Word 0 is written once, so the record keeps the first failure a launch made.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "tilegen/ir/function.h"

namespace tg {

inline constexpr const char* kAccessRecordName = "tg_access_record";
inline constexpr int kAccessRecordMaxIndices = 8;  // indices past the eighth are not recorded
inline constexpr int kAccessRecordWords = 5 + 2 * kAccessRecordMaxIndices;
// Word positions.
inline constexpr int kAccessRecordSite = 0, kAccessRecordBlock = 1, kAccessRecordThread = 4,
                     kAccessRecordIndex = 5;

/// The record buffer: u32[kAccessRecordWords], Global. Each function that holds checks gets its own.
Buffer make_access_record();
/// f's access record parameter, or nullptr when f checks no access.
const Param* find_access_record(const Function& f);

/// The record of a failure of `check` (the words a target's translation writes; the interpreter's).
std::vector<uint32_t> access_record(const ir::AccessCheck& check, const std::vector<int64_t>& block,
                                    int64_t thread, const std::vector<int64_t>& indices);
/// The error of a failure of `check` recorded in `words`.
Error access_error(const ir::AccessCheck& check, const uint32_t* words);
/// The error a record describes (nothing when word 0 is 0): the AccessCheck of that site in
/// `lowered` gives the access, buffer, shape and call site; the record gives the rest.
std::optional<Error> access_error(const Function& lowered, const uint32_t* words);

}  // namespace tg
