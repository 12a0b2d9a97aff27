#pragma once
// Umbrella header: every spinwise primitive. Include single headers to build less.

#include "spinwise/arch.hpp"
#include "spinwise/config.hpp"
#include "spinwise/guard.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/mcs_mutex.hpp"
#include "spinwise/relax_time.hpp"
#include "spinwise/rw_spinlock.hpp"
#include "spinwise/spin_shared_mutex.hpp"
#include "spinwise/sx_lock.hpp"
#include "spinwise/tas_mutex.hpp"
#include "spinwise/thread_annotations.hpp"
#include "spinwise/ticket_mutex.hpp"
#include "spinwise/ttas_mutex.hpp"
#include "spinwise/version.hpp"
#include "spinwise/wait_policy.hpp"
