// Output of the tools (`sapling` and sapling-demo): a file or standard output,
// proved writable before the work and written with every write checked.
//
// A failed open, write, flush or close is an error that names the
// destination and the reason; the caller reports it with exit status 1
// ("unwritable output", docs/trace-format.md). open() belongs before the
// work: it opens the file for writing without truncating it, so a path that
// cannot be written (a directory that does not exist, a directory, a
// read-only place) is found before anything runs, while a command that
// fails before its first write leaves an existing file as it was and
// removes a file it created. The first flush() replaces the old content. A
// full device (/dev/full) is found only when written to: flush() and
// close() report it.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

namespace sapling::cli {

/// Output to a file or standard output (`-`), collected in a buffer the
/// caller appends to and written by flush().
class Output {
 public:
  /// `path`: a file, or `-` for standard output. `option`, when given, is
  /// named in messages: "cannot write --md out.md: No space left on device".
  explicit Output(std::string path, std::string option = {}) : path_(std::move(path)), option_(std::move(option)) {}
  /// Closes the file; removes it if this Output created it and never wrote.
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  /// Opens the destination for writing without changing it (standard
  /// output: checks that it is open for writing). Called by flush() when
  /// not yet done; call it before the work. False (and error() set) on failure.
  bool open();
  std::string& buffer() noexcept { return buffer_; }
  /// Writes and clears the buffer (the first call empties the file first).
  /// False (and error() set) on failure.
  bool flush();
  /// Flushes and closes (standard output: flushes). False (and error() set) on failure.
  bool close();
  /// "cannot open PATH for writing: reason" or "cannot write PATH: reason".
  const std::string& error() const noexcept { return error_; }

 private:
  bool failed(const char* what, int error_number, const char* after = "");

  std::string path_;
  std::string option_;
  std::string buffer_;
  std::string error_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;    // file_ is ours to close (not stdout)
  bool created_ = false;  // open() made the file
  bool regular_ = false;  // a regular file: truncated by the first flush
  bool started_ = false;  // the first flush happened
  bool closed_ = false;
  bool failed_ = false;
};

/// Whether `path` can be opened for writing as Output::open() opens it; it
/// is left as it was (a file made for the test is removed). False (and
/// `error` set, "cannot open PATH for writing: reason") if not.
bool prove_writable(const std::string& path, std::string& error);

}  // namespace sapling::cli
