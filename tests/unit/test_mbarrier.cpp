// Transaction barriers and bulk copies as IR (issue 15: TMA and mbarriers): `mbarrier_init`,
// `mbarrier_arrive`, `mbarrier_expect_tx`, `mbarrier_wait` and `bulk_copy` print, parse back, are
// checked by the verifier, and run in the interpreter exactly: a bulk copy's box, zero outside
// the tensor, lands when its phase completes, and each omission (the wait, the expected bytes, the
// barrier after the init, the parity's flip) is a reported error, not a wrong answer.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"

using namespace tg;

namespace {

// Two boxes of A (100×70) into the two slots of S, each on its own barrier, the second box
// overhanging A's bottom and right edges; then every thread copies its part of slot `from` to C.
std::string kernel(const std::string& waits = "    mbarrier_wait bar[0], 0\n    mbarrier_wait bar[1], 0\n",
                   const std::string& expect = "        mbarrier_expect_tx bar[k], 16384\n",
                   const std::string& after_init = "    barrier\n", int from = 1) {
  return std::string(R"(func k(A: f32[100, 70] global, C: f32[64, 64] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    shared S: f32[2, 64, 64]
    shared bar: i64[2]
    if tx == 0 {
      mbarrier_init bar[0], 1
      mbarrier_init bar[1], 1
    }
)") + after_init +
         R"(    for k in serial(0 +: 2) {
      if tx == 0 {
)" + expect +
         R"(        bulk_copy A[k*50 +: 64, k*20 +: 64] -> S[k +: 1, 0 +: 64, 0 +: 64] on bar[k]
      }
    }
)" + waits +
         "    for i in serial(0 +: 32) {\n      let e: i32 = tx*32 + i\n      C[e / 64, e % 64] = S[" +
         std::to_string(from) + ", e / 64, e % 64]\n    }\n  }\n}\n";
}

// Interprets f on A (rows × cols of random small integers, seeded) and C (poisoned); "" or the
// interpreter's error.
std::string interpret_on(const Function& f, std::vector<float>& a, int64_t rows, int64_t cols,
                         std::vector<float>& c, int64_t c_rows, int64_t c_cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-9, 9);
  a.resize(std::size_t(rows * cols));
  c.assign(std::size_t(c_rows * c_cols), -777.0f);
  for (float& x : a) x = float(d(rng));
  std::vector<HostArg> args(2);
  args[0].data = a.data(), args[0].shape = {rows, cols};
  args[1].data = c.data(), args[1].shape = {c_rows, c_cols};
  try {
    interpret(f, args);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Runs f on a random A; "" when C holds the box of slot `from` (zero outside A), else the error.
std::string run(const Function& f, int from = 1) {
  std::vector<float> a, c;
  if (std::string e = interpret_on(f, a, 100, 70, c, 64, 64, 5); !e.empty()) return e;
  for (int r = 0; r < 64; ++r)
    for (int q = 0; q < 64; ++q) {
      const int gr = from * 50 + r, gc = from * 20 + q;
      const float want = gr < 100 && gc < 70 ? a[std::size_t(gr * 70 + gc)] : 0.0f;
      if (c[std::size_t(r * 64 + q)] != want)
        return "wrong C[" + std::to_string(r) + ", " + std::to_string(q) + "]";
    }
  return "";
}

std::string run_text(const std::string& text, int from = 1) {
  return run(parse_function(text, "m.tgir"), from);
}

}  // namespace

TEST_CASE("bulk_copy on an mbarrier: a box, zero outside the tensor, readable after the wait") {
  const std::string text = kernel();
  Function f = parse_function(text, "m.tgir");
  CHECK(print(f) == text);  // the text form round-trips
  verify(f);
  CHECK(run(f, 1) == "");
  CHECK(run_text(kernel("    mbarrier_wait bar[0], 0\n", "        mbarrier_expect_tx bar[k], 16384\n",
                        "    barrier\n", 0),
                 0) == "");
}

TEST_CASE("mbarriers: each omission is an error of the interpreter") {
  // No wait for the slot it reads.
  std::string e = run_text(kernel("    mbarrier_wait bar[0], 0\n"));
  CHECK_MESSAGE(e.find("before this thread waited for that phase") != std::string::npos, e);
  // The wrong parity: phase 0 is done, phase 1 never starts.
  e = run_text(kernel("    mbarrier_wait bar[0], 0\n    mbarrier_wait bar[1], 1\n"));
  CHECK_MESSAGE(e.find("nothing that runs before this wait completes it") != std::string::npos, e);
  // No expected bytes: the arrival never comes, the phase never completes.
  e = run_text(kernel("    mbarrier_wait bar[0], 0\n    mbarrier_wait bar[1], 0\n", ""));
  CHECK_MESSAGE(e.find("still expects 1 arrival(s)") != std::string::npos, e);
  // The same wait twice: it returns for the phase the thread already saw.
  e = run_text(
      kernel("    mbarrier_wait bar[0], 0\n    mbarrier_wait bar[1], 0\n    mbarrier_wait bar[1], 0\n"));
  CHECK_MESSAGE(e.find("phase error") != std::string::npos, e);
  // No barrier after the init: the other threads' waits race with it.
  e = run_text(kernel("    mbarrier_wait bar[0], 0\n    mbarrier_wait bar[1], 0\n",
                      "        mbarrier_expect_tx bar[k], 16384\n", ""));
  CHECK_MESSAGE(e.find("race on shared buffer bar[") != std::string::npos, e);
  // A copy no one waits for, whose bytes were never expected: it never completes.
  std::string never = kernel("", "");
  never = never.substr(0, never.find("    for i in serial")) + "  }\n}\n";
  e = run_text(never);
  CHECK_MESSAGE(e.find("never completed before the kernel ended") != std::string::npos, e);
  // Two arrivals on a phase that expects one.
  e = run_text(kernel("    mbarrier_wait bar[0], 0\n    mbarrier_wait bar[1], 0\n",
                      "        mbarrier_expect_tx bar[k], 16384\n        mbarrier_arrive bar[k]\n"));
  CHECK_MESSAGE(e.find("expects no more arrivals") != std::string::npos, e);
  // An mbarrier read as data.
  std::string data = kernel();
  data.replace(data.find("C[e / 64, e % 64] = S[1"), 23, "C[e / 64, e % 64] = cast<f32>(bar[1]) + S[1");
  e = run_text(data);
  CHECK_MESSAGE(e.find("as data") != std::string::npos, e);
}

TEST_CASE("mbarriers and bulk copies: the verifier's checks") {
  auto rejects = [](std::string text, const std::string& from, const std::string& to, const char* why) {
    text.replace(text.find(from), from.size(), to);
    CHECK_THROWS_WITH_AS(verify(parse_function(text, "m.tgir")), doctest::Contains(why), Error);
  };
  const std::string text = kernel();
  rejects(text, "shared bar: i64[2]", "shared bar: f32[2]", "shared i64 buffer");
  rejects(text, "mbarrier_wait bar[1], 0", "mbarrier_wait bar[1], 2", "the parity is 0 or 1");
  rejects(text, "mbarrier_init bar[0], 1", "mbarrier_init bar[0], 0", "expects 1 to 2^20 - 1");
  rejects(text, "S[k +: 1, 0 +: 64, 0 +: 64]", "S[k +: 1, 0 +: 64, 0 +: 32]", "the source box is");
  rejects(text, "shared S: f32[2, 64, 64]", "shared S: f16[2, 64, 64]", "of the same dtype");
}

namespace {

// Warp specialisation in the form the lock-step interpreter runs: one loop, thread 0 the producer
// (tile k into slot k % 2 once the consumers have freed it: `empty`), threads 32..63 the consumers
// (tile k - 1: wait for `full`, sum its columns into C, arrive on `empty`), no barrier in the loop.
// Every cross-thread order is an mbarrier's: the copy before the consumers' reads (full), their
// reads before the next copy into the slot (their arrivals on empty, acquired by the producer's
// wait), the first copy's landing before the producer's overwrite (learnt through the same
// arrivals: the producer never waits for full). C[j, c] = the sum of tile j's column c.
// The producer's wait for a free slot, with the parity given.
std::string empty_wait(const std::string& parity) {
  return "          if k >= 2 {\n            mbarrier_wait empty[k % 2], " + parity + "\n          }\n";
}

// The kernel's start in the tests below: a ring of two slots with their full and empty barriers.
const std::string kRingPrologue = R"(func ws(A: f32[256, 64] global, C: f32[8, 64] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared S: f32[2, 32, 64]
    shared full: i64[2]
    shared empty: i64[2]
    if tx == 0 {
      for s in serial(0 +: 2) {
        mbarrier_init full[s], 1
        mbarrier_init empty[s], 32
      }
    }
    barrier
)";

std::string specialised(const std::string& producer_wait = empty_wait("(k / 2 + 1) % 2"),
                        bool arrive_after_reads = true) {
  const std::string arrive = "          mbarrier_arrive empty[(k - 1) % 2]\n";
  return kRingPrologue + std::string(R"(    for k in serial(0 +: 9) {
      if tx == 0 {
        if k < 8 {
)") + producer_wait +
         R"(          mbarrier_expect_tx full[k % 2], 8192
          bulk_copy A[k*32 +: 32, 0 +: 64] -> S[k % 2 +: 1, 0 +: 32, 0 +: 64] on full[k % 2]
        }
      }
      if tx >= 32 {
        if k >= 1 {
          mbarrier_wait full[(k - 1) % 2], (k - 1) / 2 % 2
)" + (arrive_after_reads ? "" : arrive) +
         R"(          for q in serial(0 +: 2) {
            let c: i32 = (tx - 32) * 2 + q
            C[k - 1, c] = 0.0
            for i in serial(0 +: 32) {
              C[k - 1, c] = C[k - 1, c] + S[(k - 1) % 2, i, c]
            }
          }
)" + (arrive_after_reads ? arrive : "") +
         R"(        }
      }
    }
  }
}
)";
}

std::string run_specialised(const std::string& text) {
  std::vector<float> a, c;
  const Function f = parse_function(text, "ws.tgir");
  if (std::string e = interpret_on(f, a, 256, 64, c, 8, 64, 9); !e.empty()) return e;
  for (int j = 0; j < 8; ++j)
    for (int q = 0; q < 64; ++q) {
      float want = 0;
      for (int i = 0; i < 32; ++i) want += a[std::size_t((j * 32 + i) * 64 + q)];
      if (c[std::size_t(j * 64 + q)] != want)
        return "wrong C[" + std::to_string(j) + ", " + std::to_string(q) + "]";
    }
  return "";
}

}  // namespace

TEST_CASE("mbarriers order threads without a barrier: a producer and its consumers, full and empty") {
  const std::string text = specialised();
  Function f = parse_function(text, "ws.tgir");
  CHECK(print(f) == text);
  verify(f);
  CHECK(run_specialised(text) == "");
  // Without the producer's wait for `empty` its copy overwrites a slot the consumers read, and
  // one whose last copy it does not know landed.
  std::string e = run_specialised(specialised(""));
  CHECK_MESSAGE(e.find("by thread 0, which a bulk copy on mbarrier full[0] writes in its phase 0") !=
                    std::string::npos,
                e);
  // Arriving before the reads releases nothing of them: the same race.
  e = run_specialised(specialised(empty_wait("(k / 2 + 1) % 2"), false));
  CHECK_MESSAGE(e.find("race on shared buffer S[") != std::string::npos, e);
  // Waiting for the wrong phase of `empty` (the parity not flipped): a phase error or a wait
  // nothing completes, never a wrong answer.
  e = run_specialised(specialised(empty_wait("0")));
  CHECK_MESSAGE((e.find("phase error") != std::string::npos ||
                 e.find("nothing that runs before this wait completes it") != std::string::npos),
                e);
}

namespace {

// The producer and consumers of the test above as warp roles (ir::If::concurrent): each role its
// own loop, as on the GPU. In lock-step this deadlocks at the producer's first wait for `empty`.
std::string roles(const std::string& how = ", concurrently", const std::string& full_parity = "k / 2 % 2",
                  bool arrive_after_reads = true, const std::string& in_producer = "") {
  const std::string arrive = "        mbarrier_arrive empty[k % 2]\n";
  return kRingPrologue + std::string(R"(    if tx < 32)") + how + R"( {
)" + in_producer + R"(      if tx == 0 {
        for k in serial(0 +: 8) {
          if k >= 2 {
            mbarrier_wait empty[k % 2], (k / 2 + 1) % 2
          }
          mbarrier_expect_tx full[k % 2], 8192
          bulk_copy A[k*32 +: 32, 0 +: 64] -> S[k % 2 +: 1, 0 +: 32, 0 +: 64] on full[k % 2]
        }
      }
    } else {
      for k in serial(0 +: 8) {
        mbarrier_wait full[k % 2], )" + full_parity + "\n" + (arrive_after_reads ? "" : arrive) +
         R"(        for q in serial(0 +: 2) {
          let c: i32 = (tx - 32) * 2 + q
          C[k, c] = 0.0
          for i in serial(0 +: 32) {
            C[k, c] = C[k, c] + S[k % 2, i, c]
          }
        }
)" + (arrive_after_reads ? arrive : "") +
         R"(      }
    }
  }
}
)";
}

}  // namespace

TEST_CASE("warp roles: a producer and its consumers in concurrent branches, ordered by mbarriers alone") {
  const std::string text = roles();
  Function f = parse_function(text, "roles.tgir");
  CHECK(print(f) == text);
  verify(f);
  CHECK(run_specialised(text) == "");
  // The same branches in lock-step: the producer's wait for a free slot never returns.
  std::string e = run_specialised(roles(""));
  CHECK_MESSAGE(e.find("nothing that runs before this wait completes it") != std::string::npos, e);
  // Arriving on `empty` before the reads: the producer's next copy into the slot races them.
  e = run_specialised(roles(", concurrently", "k / 2 % 2", false));
  CHECK_MESSAGE(e.find("race on shared buffer S[") != std::string::npos, e);
  // The consumers waiting for the wrong phase of `full`: a phase error or a deadlock, never an answer.
  e = run_specialised(roles(", concurrently", "(k / 2 + 1) % 2"));
  CHECK_MESSAGE((e.find("phase error") != std::string::npos ||
                 e.find("neither role can go on") != std::string::npos),
                e);
  // A role's failure ends the block with its error (the other role unwinds).
  e = run_specialised(roles(", concurrently", "k / 2 % 2", true, "      C[tx + 100, 0] = 1.0\n"));
  CHECK_MESSAGE(e.find("out of bounds") != std::string::npos, e);
  // The verifier: roles need an else-branch, hold no barrier, and do not nest.
  auto verify_error = [](const std::string& t) {
    try {
      verify(parse_function(t, "roles.tgir"));
    } catch (const Error& x) {
      return std::string(x.what());
    }
    return std::string();
  };
  CHECK_MESSAGE(verify_error(roles(", concurrently", "k / 2 % 2", true, "      barrier\n"))
                        .find("barrier inside a branch of warp roles") != std::string::npos,
                "barrier");
  std::string no_else = text;
  const std::size_t at = no_else.find("    } else {");
  no_else = no_else.substr(0, at) + "    }\n  }\n}\n";
  CHECK(verify_error(no_else).find("without an else-branch") != std::string::npos);
  const std::string nested = "      if tx < 8, concurrently {\n      } else {\n      }\n";
  CHECK(verify_error(roles(", concurrently", "k / 2 % 2", true, nested)).find("roles do not nest") !=
        std::string::npos);
}
