#pragma once
// Shared by the profile_*.cpp files; not installed. The profile's jobs, one file each:
//   profile_json.cpp      the document: writing it, and reading text into JSON (size, depth, syntax)
//   profile_validate.cpp  JSON -> calibration_result, every field checked (format, version, ranges)
//   profile_io.cpp        files: the atomic write, the bounded read, $SPINWISE_PROFILE
//   profile_apply.cpp     installing a profile in this process (and the load that ends with it)

#include <nlohmann/json.hpp>
#include <string>

#include "spinwise/runtime/profile.hpp"

namespace spinwise::detail {

// Every failed load's message ends with this: a failed load changes nothing.
inline constexpr const char* kProfileUnchanged = "; nothing was applied";

inline profile_status profile_failure(profile_errc code, std::string message) {
  return {code, std::move(message)};
}

// A parsed document -> `out` (format, version, then every field, with derived sections
// recomputed). `out` is untouched unless the status is ok.
profile_status profile_from_document(const nlohmann::json& doc, calibration_result& out);

}  // namespace spinwise::detail
