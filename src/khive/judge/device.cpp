// JudgeDevice's gated clock on a backend without one (the CPU): every call is a logic error in the judge.
#include <stdexcept>

#include "khive/judge/device.hpp"

namespace khive {
namespace {
[[noreturn]] void no_gate(const char* what) {
  throw std::logic_error(std::string("JudgeDevice::") + what + ": this backend has no gated clock");
}
}  // namespace

void JudgeDevice::wait_geq(void*, uint32_t) { no_gate("wait_geq"); }
void JudgeDevice::write_value(void*, uint32_t) { no_gate("write_value"); }
void JudgeDevice::release(void*, uint32_t) { no_gate("release"); }
void JudgeDevice::mark(int) { no_gate("mark"); }
double JudgeDevice::elapsed_s(int, int) { no_gate("elapsed_s"); }
void JudgeDevice::flush_async() { no_gate("flush_async"); }
void JudgeDevice::checksum_async(const void*, std::size_t, int) { no_gate("checksum_async"); }
std::vector<uint64_t> JudgeDevice::read_checksums(int, int) { no_gate("read_checksums"); }
bool JudgeDevice::wait_idle(double) { no_gate("wait_idle"); }

}  // namespace khive
