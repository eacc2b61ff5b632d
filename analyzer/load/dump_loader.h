// Loads one dump for the reports: opens it, decodes its frames in parallel
// and folds them, in file order, into a LoadedDump. A cut file loads up to its
// last complete frame; a corrupt one is an error naming the file and offset.
#pragma once

#include <string>

#include "load/loaded_dump.h"
#include "memrec/reader/dump_reader.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

struct LoadOptions {
  unsigned threads = 0;  // decoding threads; 0: one per core, at most 8
};

Result<LoadedDump> load_dump(const std::string& path, const LoadOptions& options = {});
Result<LoadedDump> load_dump(reader::Dump dump, const LoadOptions& options = {});

}  // namespace memrec::analyzer
