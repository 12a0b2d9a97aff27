#pragma once
// Deprecated (kept so that existing includers build): what this header held is in
// <spinwise/knob_status.hpp>, <spinwise/errc.hpp> and <spinwise/cpu_relaxer.hpp>.
#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/errc.hpp"
#include "spinwise/knob_status.hpp"
