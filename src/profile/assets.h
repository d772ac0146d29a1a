// The explorer's CSS and JavaScript, embedded at build time (embed_assets.cmake).
#pragma once

#include <cstddef>
#include <string_view>

namespace trnsim::profile::assets {

extern const std::string_view kExplorerJs[];
extern const std::size_t kExplorerJsCount;
extern const std::string_view kExplorerCss[];
extern const std::size_t kExplorerCssCount;

}  // namespace trnsim::profile::assets
