// Checked output to a file or standard output (output.hpp).
#include "output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sapling::cli {

Output::~Output() {
  if (owned_ && file_ != nullptr) std::fclose(file_);
  if (created_ && !started_) ::unlink(path_.c_str());
}

bool Output::failed(const char* what, int error_number, const char* after) {
  std::string name = path_ == "-" ? std::string("standard output") : path_;
  if (!option_.empty() && path_ != "-") name = option_ + " " + name;
  error_ = std::string(what) + name + after + ": " + std::strerror(error_number);
  failed_ = true;
  return false;
}

bool Output::open() {
  if (failed_) return false;
  if (file_ != nullptr || closed_) return true;
  if (path_ == "-") {
    // A closed or read-only standard output is found now; a full one only when written.
    const int flags = ::fcntl(STDOUT_FILENO, F_GETFL);
    if (flags == -1) return failed("cannot write ", errno);
    if ((flags & O_ACCMODE) == O_RDONLY) return failed("cannot write ", EBADF);
    file_ = stdout;
    return true;
  }
  // Opened without O_TRUNC: the file keeps its content until the first flush.
  struct stat before;
  const bool existed = ::lstat(path_.c_str(), &before) == 0;
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd == -1) return failed("cannot open ", errno, " for writing");
  struct stat now;
  regular_ = ::fstat(fd, &now) == 0 && S_ISREG(now.st_mode);
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    const int error_number = errno;
    ::close(fd);
    return failed("cannot open ", error_number, " for writing");
  }
  owned_ = true;
  created_ = !existed;
  return true;
}

bool Output::flush() {
  if (!open()) return false;
  if (closed_) return buffer_.empty() || failed("cannot write ", EBADF);
  if (!started_) {
    started_ = true;
    if (regular_ && ::ftruncate(::fileno(file_), 0) != 0) return failed("cannot write ", errno);
  }
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    return failed("cannot write ", errno);
  }
  buffer_.clear();
  return true;
}

bool Output::close() {
  if (closed_) return !failed_;
  if (!flush()) return false;
  closed_ = true;
  const bool ok = owned_ ? std::fclose(file_) == 0 : std::fflush(file_) == 0 && std::ferror(file_) == 0;
  const int error_number = errno;
  if (owned_) file_ = nullptr;
  owned_ = false;
  return ok || failed("cannot write ", error_number);
}

bool prove_writable(const std::string& path, std::string& error) {
  Output probe(path);  // never flushed: a file it creates is removed again
  if (probe.open()) return true;
  error = probe.error();
  return false;
}

}  // namespace sapling::cli
