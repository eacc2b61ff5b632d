// The summed bar counts every pass since it appeared, finished ones at their
// end, so its percent does not fall back when one ends; it is erased when no
// pass runs, and the next pass starts a new one.
#include "server/load_board.h"

#include <unistd.h>

#include <utility>

namespace memrec::analyzer {

LoadBoard::LoadBoard(bool enabled, std::size_t dumps, unsigned at_once)
    : enabled_(enabled),
      combined_(at_once > 1 && ProgressBar::style_for(STDERR_FILENO) == ProgressBar::Style::kBar),
      label_("loading " + std::to_string(dumps) + (dumps == 1 ? " dump" : " dumps")) {}

LoadBoard::Pass::Pass(LoadBoard& board, std::string label) : board_(board) {
  if (!board.combined_) {
    own_.emplace(stderr, board.enabled_, std::move(label), ProgressBar::style_for(STDERR_FILENO));
    return;
  }
  const std::lock_guard lock(board.mu_);
  slot_ = board.slots_.size();
  board.slots_.emplace_back();
}

LoadBoard::Pass::~Pass() {
  if (own_) return;
  const std::lock_guard lock(board_.mu_);
  board_.slots_[slot_].running = false;
  for (const Slot& s : board_.slots_) {
    if (s.running) return;
  }
  board_.bar_.reset();
  board_.slots_.clear();
}

void LoadBoard::Pass::update(std::size_t done, std::size_t total, const LoadProgress* read) {
  if (own_) {
    if (read != nullptr) {
      own_->update(done, total, *read);
    } else {
      own_->update(done, total);
    }
    return;
  }
  const std::lock_guard lock(board_.mu_);
  Slot& s = board_.slots_[slot_];
  s.done = done;
  s.total = total;
  if (read != nullptr) s.read = *read;
  board_.draw();
}

void LoadBoard::draw() {
  if (!bar_) bar_.emplace(stderr, enabled_, label_, ProgressBar::Style::kBar);
  std::size_t done = 0;
  std::size_t total = 0;
  LoadProgress sum;
  for (const Slot& s : slots_) {
    done += s.done;
    total += s.total;
    sum.bytes_read += s.read.bytes_read;
    sum.bytes_total += s.read.bytes_total;
    sum.events += s.read.events;
  }
  bar_->update(done, total, sum);
}

}  // namespace memrec::analyzer
