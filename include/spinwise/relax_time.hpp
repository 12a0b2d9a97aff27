#pragma once
// Deprecated (kept so that existing includers build): the old name of <spinwise/relax_table.hpp>.
#include "spinwise/relax_table.hpp"
