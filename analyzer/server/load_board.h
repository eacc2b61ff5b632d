// memrec view's progress on stderr while several passes over dumps run at
// once (view_loads.h). Lines (not a terminal), or a single pass at a time:
// each pass has its own ProgressBar, as one load has, a line every ten
// seconds per dump. On a terminal with passes in parallel, their bars would
// overwrite each other: one bar sums them ("loading 3 dumps").
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/progress_bar.h"

namespace memrec::analyzer {

class LoadBoard {
 public:
  LoadBoard(bool enabled, std::size_t dumps, unsigned at_once);

  // One pass's progress, from its loading thread.
  class Pass {
   public:
    Pass(LoadBoard& board, std::string label);
    ~Pass();
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    void update(std::size_t done, std::size_t total, const LoadProgress* read = nullptr);

   private:
    LoadBoard& board_;
    std::size_t slot_ = 0;
    std::optional<ProgressBar> own_;
  };

 private:
  struct Slot {
    std::size_t done = 0;
    std::size_t total = 0;
    LoadProgress read;
    bool running = true;
  };
  void draw();  // under mu_

  bool enabled_;
  bool combined_;
  std::string label_;
  std::mutex mu_;
  std::optional<ProgressBar> bar_;  // the summed bar, while passes run
  std::vector<Slot> slots_;         // since bar_ was made
};

}  // namespace memrec::analyzer
