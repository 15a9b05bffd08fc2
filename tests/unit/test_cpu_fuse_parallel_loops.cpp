// fuse_parallel_loops (the cpu pipeline's last pass): neighbouring parallel nests over one
// iteration space merge when each element depends only on its own earlier work; anything else
// stays apart. Each case runs before and after in the interpreter on the same inputs, and the
// ragged one on the cpu target too.
#include "cpu_test_util.h"
#include "gpu_pass_test_util.h"
#include "tilegen/passes/fuse_parallel_loops.h"

using namespace tg;
using namespace tg::test;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

Function fuse(const Function& f) { return fuse_parallel_loops(f, TargetInfo{}); }

}  // namespace

TEST_CASE("fuse_parallel_loops: copy in, scale, bounds-checked copy out of a ragged tile become one nest") {
  // Y is 13×100; 4×32 tiles, so the last row of blocks and the last column tile are ragged.
  Function f = parse_function(R"(
func scale(Y: f32[13, 100] global, S: f32[4] global) {
  kernel grid(4) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    for jo in serial(0 +: 4) {
      for c0 in parallel(0 +: 4) {
        for c1 in parallel(0 +: 32) {
          x[c0, c1] = select(bx*4 + c0 < 13 && jo*32 + c1 < 100, Y[bx*4 + c0, jo*32 + c1], 0.0)
        }
      }
      for i in parallel(0 +: 4) {
        for j in parallel(0 +: 32) {
          x[i, j] = x[i, j] * S[i] + 1.0
        }
      }
      for c0 in parallel(0 +: 4) {
        for c1 in parallel(0 +: 32) {
          if bx*4 + c0 < 13 && jo*32 + c1 < 100 {
            Y[bx*4 + c0, jo*32 + c1] = x[c0, c1]
          }
        }
      }
    }
  }
})");
  Function g = fuse(f);
  std::string text = print(g);
  INFO(text);
  CHECK(count(text, "in parallel(0 +: 4)") == 1);
  CHECK(count(text, "in parallel(0 +: 32)") == 1);
  check_same_results(f, g);
  if (auto cpu = tg::testing::cpu_target_or_skip()) {
    std::mt19937_64 rng(3);
    tg::testing::check_cpu_matches_interpreter(
        *cpu, f, {tg::testing::random_array({13, 100}, f32, rng), tg::testing::random_array({4}, f32, rng)});
  }
}

TEST_CASE("fuse_parallel_loops: a neighbour's element, a row reduction or another shape keeps nests apart") {
  // x[i, 31 - j] is written by another iteration: fused, half the reads would come too early.
  Function mirrored = parse_function(R"(
func mirror(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        x[i, j] = X[i, j] * 2.0
      }
    }
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        Y[i, j] = x[i, 31 - j]
      }
    }
  }
})");
  // A row sum reads every element of the row: it must follow the whole first nest.
  Function summed = parse_function(R"(
func rowsum(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        x[i, j] = X[i, j] + 1.0
      }
    }
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        Y[i, j] = 0.0
        for r in serial(0 +: 32) {
          Y[i, j] = Y[i, j] + x[i, r]
        }
      }
    }
  }
})");
  // Same buffers, another iteration space.
  Function shapes = parse_function(R"(
func shapes(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        Y[i, j] = X[i, j]
      }
    }
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 16) {
        Y[i, j] = Y[i, j] * 3.0
      }
    }
  }
})");
  for (const Function* f : {&mirrored, &summed, &shapes}) {
    Function g = fuse(*f);
    INFO(print(g));
    CHECK(count(print(g), "for i in parallel(0 +: 4)") == 2);
    check_same_results(*f, g);
  }
}

TEST_CASE("fuse_parallel_loops: buffers only read by both nests do not stop fusion; a barrier does") {
  Function f = parse_function(R"(
func shared_reads(X: f32[4, 32] global, Y: f32[4, 32] global, Z: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        Y[i, j] = X[i, 31 - j]
      }
    }
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        Z[i, j] = X[3 - i, j] + Y[i, j]
      }
    }
  }
})");
  Function g = fuse(f);
  CHECK(count(print(g), "for i in parallel(0 +: 4)") == 1);
  check_same_results(f, g);
  Function with_barrier = parse_function(R"(
func fenced(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        Y[i, j] = X[i, j]
      }
    }
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        barrier
        Y[i, j] = Y[i, j] * 2.0
      }
    }
  }
})");
  CHECK(count(print(fuse(with_barrier)), "for i in parallel(0 +: 4)") == 2);
}

TEST_CASE("fuse_parallel_loops: a fragment that lives one iteration becomes lets and leaves the kernel") {
  // softmax's second walk: x is written, rewritten and read in one iteration, and nowhere else.
  Function f = parse_function(R"(
func walk(X: f32[8, 64] global, Y: f32[8, 64] global, M: f32[4] global) {
  kernel grid(2) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    fragment acc: f32[4, 32]
    for jo in serial(0 +: 2) {
      for c0 in parallel(0 +: 4) {
        for c1 in parallel(0 +: 32) {
          x[c0, c1] = X[bx*4 + c0, jo*32 + c1]
        }
      }
      for i in parallel(0 +: 4) {
        for j in parallel(0 +: 32) {
          x[i, j] = exp(x[i, j] - M[i])
        }
      }
      for c0 in parallel(0 +: 4) {
        for c1 in parallel(0 +: 32) {
          Y[bx*4 + c0, jo*32 + c1] = x[c0, c1]
        }
      }
      for i in parallel(0 +: 4) {
        for j in parallel(0 +: 32) {
          acc[i, j] = acc[i, j] + x[i, j]
        }
      }
    }
    for c0 in parallel(0 +: 4) {
      for c1 in parallel(0 +: 32) {
        Y[bx*4 + c0, c1] = Y[bx*4 + c0, c1] + acc[c0, c1]
      }
    }
  }
})");
  Function g = fuse(f);
  std::string text = print(g);
  INFO(text);
  CHECK(text.find("fragment x") == std::string::npos);
  CHECK(count(text, "x[") == 0);
  CHECK(count(text, "let x_") == 2);
  CHECK(text.find("fragment acc") != std::string::npos);  // read across iterations of jo: kept
  check_same_results(f, g, 1e-6);
  if (auto cpu = tg::testing::cpu_target_or_skip()) {
    std::mt19937_64 rng(4);
    tg::testing::check_cpu_matches_interpreter(
        *cpu, f,
        {tg::testing::random_array({8, 64}, f32, rng), tg::testing::random_array({8, 64}, f32, rng),
         tg::testing::random_array({4}, f32, rng)});
  }
}

TEST_CASE(
    "fuse_parallel_loops: a fragment read before its store, elsewhere, under an if or at another index "
    "stays") {
  // Each kernel writes Y from x; x must keep its storage (a value crosses iterations or nests).
  const char* cases[] = {// read before the iteration's store: the value comes from the previous jo
                         R"(
func before(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    for jo in serial(0 +: 2) {
      for i in parallel(0 +: 4) {
        for j in parallel(0 +: 32) {
          Y[i, j] = Y[i, j] + x[i, j]
          x[i, j] = X[i, j] * 2.0
        }
      }
    }
  }
})",
                         // stored under an if: where the condition fails the old value stays
                         R"(
func guarded(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        x[i, j] = 1.0
        if X[i, j] > 0.0 {
          x[i, j] = X[i, j]
        }
        Y[i, j] = x[i, j]
      }
    }
  }
})",
                         // read at another element (a neighbour's value)
                         R"(
func neighbour(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        x[i, j] = X[i, j]
      }
    }
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        Y[i, j] = x[i, 31 - j]
      }
    }
  }
})",
                         // read outside a parallel nest
                         R"(
func outside(X: f32[4, 32] global, Y: f32[4, 32] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    fragment x: f32[4, 32]
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 32) {
        x[i, j] = X[i, j]
      }
    }
    for r in serial(0 +: 4) {
      Y[r, 0] = x[r, 5]
    }
  }
})"};
  for (const char* src : cases) {
    Function f = parse_function(src);
    Function g = fuse(f);
    INFO(print(g));
    CHECK(print(g).find("fragment x") != std::string::npos);
    check_same_results(f, g);
  }
}
