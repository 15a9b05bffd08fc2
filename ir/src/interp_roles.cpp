// Warp roles (ir::If::concurrent) in the SIMT executor: the threads of each branch are a thread
// of control of their own, as a producer warp and its consumer warpgroups are on the GPU.
//
//   if tx < 128, concurrently {                 role 0: lanes 0..127, lock-step among themselves
//     ... mbarrier_wait empty[s], p ...         (phase not complete: role 1 runs)
//   } else {                                    role 1: lanes 128..383
//     ... mbarrier_wait full[s], q ...
//   }
//
// Each role runs on a host thread of its own, so that the recursive executor keeps its shape,
// but only one runs at a time: role 0 first, until it finishes or its threads wait for an mbarrier
// phase that has not completed (yield_role); then role 1, and so on. A role whose wait cannot
// return hands over only while that can help: where the other role has finished, or waits too
// and no phase has completed since it began to, the wait fails as the deadlock it would be on the
// GPU. The schedule is deterministic; the race detector does not depend on it, since it orders
// the roles' accesses only through their mbarriers' arrivals and waits (interp_mbarrier.cpp).
#include <condition_variable>
#include <exception>
#include <thread>

#include "interp_internal.h"

namespace tg::interp {

struct BlockExec::Roles {
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;  // the role that runs
  bool done[2] = {false, false};
  bool waiting[2] = {false, false};  // in yield_role: its threads wait for a phase
  uint64_t waiting_since[2] = {0, 0};  // phases_done_ when it began to
  bool abort = false;                  // a role failed: the other unwinds at its next turn
  std::exception_ptr error;
  std::deque<Frame> frames[2];
  const SNode* cur[2] = {nullptr, nullptr};
};

namespace {
struct RoleAborted {};  // thrown in a role when the other one failed: unwinds it, is no error
}  // namespace

void BlockExec::exec_roles(const SNode& s, Mask first, Mask second, int depth) {
  cur_ = &s;
  if (roles_) fail("warp roles inside a branch of warp roles: roles do not nest");
  if (single_lane_) fail("warp roles inside a parallel loop; roles are per-thread code");
  Roles r;
  roles_ = &r;
  const SNode* here = cur_;
  {
    std::thread t0([&] { run_role(0, s.body, first, depth + 1); });
    std::thread t1([&] { run_role(1, s.orelse, second, depth + 1); });
    t0.join();
    t1.join();
  }
  roles_ = nullptr, role_ = -1, role_frames_ = nullptr, cur_ = here;
  if (r.error) std::rethrow_exception(r.error);
}

// A role's host thread: waits for its first turn, runs its branch, then hands the block over.
void BlockExec::run_role(int role, int32_t body, Mask m, int depth) {
  Roles& r = *roles_;
  {
    std::unique_lock<std::mutex> lock(r.mu);
    r.cv.wait(lock, [&] { return r.turn == role || r.abort; });
  }
  try {
    if (r.abort) throw RoleAborted{};
    role_ = role, role_frames_ = &r.frames[role];
    exec(body, m, depth);
  } catch (const RoleAborted&) {
  } catch (...) {
    std::lock_guard<std::mutex> lock(r.mu);
    if (!r.error) r.error = std::current_exception();
    r.abort = true;
  }
  std::lock_guard<std::mutex> lock(r.mu);
  r.done[role] = true;
  r.turn = 1 - role;  // the other role runs on (or, after a failure, unwinds)
  r.cv.notify_all();
}

bool BlockExec::yield_role() {
  Roles& r = *roles_;
  const int me = role_, other = 1 - role_;
  std::unique_lock<std::mutex> lock(r.mu);
  if (r.done[other] || (r.waiting[other] && r.waiting_since[other] == phases_done_)) return false;
  r.waiting[me] = true, r.waiting_since[me] = phases_done_, r.cur[me] = cur_;
  r.turn = other;
  r.cv.notify_all();
  r.cv.wait(lock, [&] { return r.turn == me || r.abort; });
  if (r.abort) throw RoleAborted{};
  r.waiting[me] = false;
  role_ = me, role_frames_ = &r.frames[me], cur_ = r.cur[me];
  return true;
}

}  // namespace tg::interp
