// CompressedOutput's zstd codec: one zstd frame with a content checksum (as
// the zstd command writes), fed through ZSTD_compressStream2 so memory stays
// at zstd's window whatever the size of the file.
#include <fmt/format.h>
#include <zstd.h>

#include <vector>

#include "export/compressed_output.h"

namespace memrec::analyzer {
namespace {

class ZstdCodec final : public Codec {
 public:
  ZstdCodec(ZSTD_CCtx* ctx, std::ostream& sink, std::string name)
      : ctx_(ctx), sink_(sink), name_(std::move(name)), out_(ZSTD_CStreamOutSize()) {}
  ~ZstdCodec() override { ZSTD_freeCCtx(ctx_); }
  ZstdCodec(const ZstdCodec&) = delete;
  ZstdCodec& operator=(const ZstdCodec&) = delete;

  Status write(std::span<const char> in, bool end) override {
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    for (;;) {
      ZSTD_outBuffer output{out_.data(), out_.size(), 0};
      const std::size_t left = ZSTD_compressStream2(ctx_, &output, &input, end ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) {
        return Error{ErrorCode::kInternal,
                     fmt::format("zstd compression of {} failed: {}", name_, ZSTD_getErrorName(left))};
      }
      sink_.write(out_.data(), static_cast<std::streamsize>(output.pos));
      if (!sink_) return sink_error(name_);
      // ZSTD_e_continue is done once it has taken all the input; ZSTD_e_end
      // once it has nothing left to flush (zstd.h, ZSTD_compressStream2).
      if (end ? left == 0 : input.pos == input.size) return {};
    }
  }

 private:
  ZSTD_CCtx* ctx_;
  std::ostream& sink_;
  std::string name_;
  std::vector<char> out_;
};

}  // namespace

Result<std::unique_ptr<Codec>> make_zstd_codec(std::ostream& sink, const std::string& name) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  if (ctx == nullptr)
    return Error{ErrorCode::kInternal, "zstd could not start compressing " + name + " (out of memory?)"};
  auto codec = std::make_unique<ZstdCodec>(ctx, sink, name);
  for (const auto& [param, value] :
       {std::pair{ZSTD_c_compressionLevel, ZSTD_CLEVEL_DEFAULT}, std::pair{ZSTD_c_checksumFlag, 1}}) {
    const std::size_t rc = ZSTD_CCtx_setParameter(ctx, param, value);
    if (ZSTD_isError(rc)) {
      return Error{ErrorCode::kInternal,
                   fmt::format("zstd could not start compressing {}: {}", name, ZSTD_getErrorName(rc))};
    }
  }
  return std::unique_ptr<Codec>(std::move(codec));
}

}  // namespace memrec::analyzer
