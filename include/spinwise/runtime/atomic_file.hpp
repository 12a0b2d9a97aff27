#pragma once
// Writing a whole file so that it is either the old one or the new one (spinwise::runtime): the
// one writer of profiles, of spinwise-calibrate's documents and of spinwise-stress's results.

#include <string>

namespace spinwise {

// Writes `text` to `path`: into a temporary file beside it, flushed to the disk (fsync), then
// renamed over `path`, and the directory flushed so that the rename survives a crash too. A
// reader sees the old file or the new one, never part of either. On failure returns false with
// the reason in *error (when not null), naming `path`, and leaves `path` as it was. A symbolic
// link is written through (its target replaced, the link kept); a path that is not a regular
// file (/dev/null, /dev/stdout, a FIFO) is written in place, not replaced.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace spinwise
