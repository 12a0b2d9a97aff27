#pragma once
// Deprecated (kept so that existing includers build): the old name of <spinwise/knob_text.hpp>.
#include "spinwise/knob_text.hpp"
