// Reading the tools' output for the prompt: Nsight Compute's CSV (details page) and compute-sanitizer's
// memcheck report. Separate from profile.cpp so the parsers are unit-tested without a GPU.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace khive::llm {

struct NcuParsed {
  nlohmann::json metrics;  // kernel label -> {"Block Size": "(256, 1, 1)", "Duration": "12.3 us", ..., "advice": [..]}
  std::string text;        // per kernel: launch, registers, smem, duration, throughputs, occupancy, advice
};
// `ncu --csv --page details` output (any "==PROF==" lines around it are skipped). Columns are found by
// their header names, so older and newer ncu versions (with or without the rule columns) both read.
NcuParsed parse_ncu_csv(const std::string& out);

// The first memcheck errors ("========= Invalid ... / at ... / by thread ... / Address ..."), at most
// 40 lines, with the candidate's source line where a location "kernel.cu:N" is given.
std::string memcheck_excerpt(const std::string& out, const std::string& source);

}  // namespace khive::llm
