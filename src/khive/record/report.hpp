// What a run directory says, for people: the board (`khive board RUN`), the final summary, and report.html —
// one self-contained page (inline SVG, no network): best score over time per agent, every candidate's time,
// the lineage of the leader, the board, strategy switches, device slot use. Rebuilt from run.db at any time
// (`khive report RUN`).
#pragma once
#include <filesystem>
#include <string>

namespace khive {

// Throws std::runtime_error naming the directory when it holds no run.db.
std::string board_text(const std::filesystem::path& run_dir, bool include_evicted = false);
std::string summary_text(const std::filesystem::path& run_dir);
std::string report_html(const std::filesystem::path& run_dir);
// Writes run_dir/report.html (atomically) and returns its path.
std::filesystem::path write_report(const std::filesystem::path& run_dir);

}  // namespace khive
