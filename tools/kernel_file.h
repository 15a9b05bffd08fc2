// A user's kernel as IR text (a *.tgir file, docs/ir_text.md) where `tilegen ir|source|run` take a
// sample: read, parsed and verified; its sizes and scalars from --set over the file's own
// `# sizes N=.. M=..` line (the kernel fuzzer's case files have one); and, for run, a problem made
// the way a sample makes one — random inputs, poisoned outputs — whose reference is the
// interpreter on the same inputs.
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "args.h"
#include "tilegen/samples.h"
#include "tilegen/tilegen.h"

namespace tg::cli {

/// Whether a positional names an IR text file rather than a sample: it ends in ".tgir" or holds
/// a '/'.
bool is_kernel_file(const std::string& arg);

struct KernelFile {
  std::string path;
  Function fn;                             // as written: symbolic sizes still free
  std::map<std::string, int64_t> sizes;    // the file's `# sizes` line, overlaid with --set
  std::map<std::string, int64_t> scalars;  // from --set
};

/// Reads, parses and verifies `path`. `set` (the --set items) gives sizes and scalars of its
/// function. A file that cannot be read, a parse or verifier error ("FILE:LINE: ..."), or a --set
/// name that is neither a size nor a scalar is a UsageError.
KernelFile read_kernel_file(const std::string& path, const samples::Params& set);

/// A tg::Error naming the first size of the kernel that has no value ("size K of gemm.tgir is not
/// given: add --set K=VALUE"); with `scalars`, the same for its scalars.
void require_values(const KernelFile& k, bool scalars);

/// "M=50,N=37" (the --set syntax), sizes only.
std::string format_sizes(const KernelFile& k);

/// A problem for the kernel at its sizes, as samples::Sample::make_problem makes one: every tensor
/// the kernel only reads is a random input, one it writes is an output (buffer_access.h):
/// poisoned, or random as well when the kernel also reads it (its old contents are part of the
/// result). `expected` holds what the interpreter leaves in each output, run on copies of the
/// same inputs — the reference. Every size and scalar must have a value (require_values).
samples::Problem make_file_problem(const KernelFile& k, std::mt19937_64& rng);

/// Per output of `p`, in order: the dtype's tolerance for a value summed from as many terms as
/// the largest tensor dimension (samples::accumulation_tolerance), so reassociated sums of
/// any contraction or reduction the kernel does pass and a wrong element does not.
std::vector<samples::Tolerance> file_tolerances(const samples::Problem& p);

}  // namespace tg::cli
