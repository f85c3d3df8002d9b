#include <gtest/gtest.h>

#include <fstream>

#include "khive/record/event_log.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {
fs::path tmpdir() { return make_temp_dir(fs::temp_directory_path(), "khive-event-log-test"); }
void append_raw(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::app | std::ios::binary);
  f << s;
}
}  // namespace

TEST(EventLog, AppendsAndReadsBack) {
  auto d = tmpdir();
  {
    EventLog log(d / "events.jsonl");
    log.append({{"type", "a"}, {"n", 1}});
    log.append({{"type", "b"}, {"n", 2}});
  }
  auto r = read_event_log(d / "events.jsonl");
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[1]["type"], "b");
  EXPECT_FALSE(r.torn_tail);
}

TEST(EventLog, TornLastLineIsIgnoredAndCutBeforeTheNextAppend) {
  auto d = tmpdir();
  auto f = d / "events.jsonl";
  append_raw(f, "{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"type\":\"c\",\"te");  // crash mid-write
  auto r = read_event_log(f);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_TRUE(r.torn_tail);
  {
    EventLog log(f);  // reopening cuts the torn tail
    log.append({{"type", "d"}});
  }
  r = read_event_log(f);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[2]["type"], "d");
  EXPECT_FALSE(r.torn_tail);
  EXPECT_EQ(read_file(f), "{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"type\":\"d\"}\n");
}

TEST(EventLog, GarbledLineInTheMiddleIsAnErrorNamingTheLine) {
  auto d = tmpdir();
  auto f = d / "events.jsonl";
  append_raw(f, "{\"type\":\"a\"}\nnot json\n{\"type\":\"b\"}\n");
  try {
    read_event_log(f);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}
