// A run's event log, events.jsonl: append-only, one JSON object per line, fsync'd per event, crash-safe. It is the
// record a results folder keeps when it leaves run.db out (run_records.hpp reads either).
//
//   EventLog log(run / "events.jsonl");  log.append({{"type","candidate"}, ...});
//   auto r = read_event_log(run / "events.jsonl");   // r.events; r.torn_tail when the last line was cut
#pragma once
#include <filesystem>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive {

class EventLog {
 public:
  // Opens (creates) the log for appending. A torn last line (a crash mid-write: no final newline) is cut
  // off first, so the next event starts on a line of its own.
  explicit EventLog(std::filesystem::path file);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  // Writes one JSON line and fsyncs it before returning; thread-safe.
  void append(const nlohmann::json& event);
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  std::mutex mu_;
};

struct EventLogContents {
  std::vector<nlohmann::json> events;
  bool torn_tail = false;  // the last line was incomplete or unparsable and was ignored
};
// Reads a log. Only the last line may be torn; a bad line elsewhere throws std::runtime_error naming the
// file and the line. A missing file throws too.
EventLogContents read_event_log(const std::filesystem::path& file);

}  // namespace khive
