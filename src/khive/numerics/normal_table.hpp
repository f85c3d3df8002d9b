// Quantiles of the standard normal distribution at j / 4096, j = 1 .. 4095, as exact hexadecimal literals
// (generated once with Python's statistics.NormalDist().inv_cdf; data, so every platform and the GPU read the
// same bits). Used by input_value (inputs.hpp) to draw normal inputs by inverse transform: a bin by the hash's
// top 12 bits, a linear position inside it by the next 40.
#pragma once

#include "khive/numerics/numeric.hpp"

namespace khive::detail {

inline constexpr int kNormalBins = 4096;

#define KHIVE_NORMAL_QUANTILES                                                                                       \
  -0x1.be596d62759d4p+1, -0x1.a60a6e7a2afbbp+1, -0x1.973d5862e57fep+1, -0x1.8c73502ae34eep+1, -0x1.83e7c561d08a8p+1, \
      -0x1.7ccd7ab02a213p+1, -0x1.76b5674b93d99p+1, -0x1.715c7c1c88ccbp+1, -0x1.6c9707a3e4fcbp+1,                    \
      -0x1.6846f032e3e88p+1, -0x1.6456919431845p+1, -0x1.60b5d353018bfp+1, -0x1.5d58676e30b7dp+1,                    \
      -0x1.5a34ae3d6eb2dp+1, -0x1.5742fb82793bep+1, -0x1.547d173f6ec88p+1, -0x1.51dde4b9434dep+1,                    \
      -0x1.4f6122a6d967bp+1, -0x1.4d033c71e5970p+1, -0x1.4ac1275372feap+1, -0x1.489847dabeeefp+1,                    \
      -0x1.46865d8a43065p+1, -0x1.448972ef06707p+1, -0x1.429fd11029fe9p+1, -0x1.40c7f566eb88dp+1,                    \
      -0x1.3f0089c7fb009p+1, -0x1.3d485dce9be20p+1, -0x1.3b9e617638f83p+1, -0x1.3a01a0a3602aap+1,                    \
      -0x1.38713f6bf2c9cp+1, -0x1.36ec76f94fbedp+1, -0x1.357292e7715f5p+1, -0x1.3402ef0a2b839p+1,                    \
      -0x1.329cf58671158p+1, -0x1.31401d312c2bbp+1, -0x1.2febe828071b9p+1, -0x1.2e9fe29abaef9p+1,                    \
      -0x1.2d5ba1bd35cf7p+1, -0x1.2c1ec2dc4e029p+1, -0x1.2ae8ea8fd12dcp+1, -0x1.29b9c405a2e28p+1,                    \
      -0x1.289100625593fp+1, -0x1.276e56343e9b3p+1, -0x1.265180f6804b2p+1, -0x1.253a40a1e98cfp+1,                    \
      -0x1.24285949dd7c6p+1, -0x1.231b92c3ba460p+1, -0x1.2213b8576fdb9p+1, -0x1.211098782703fp+1,                    \
      -0x1.20120484018c2p+1, -0x1.1f17d08a1e4d7p+1, -0x1.1e21d316286fep+1, -0x1.1d2fe500d1b0dp+1,                    \
      -0x1.1c41e144ac338p+1, -0x1.1b57a4d6ea1d6p+1, -0x1.1a710e8398759p+1, -0x1.198dfeccf7cd1p+1,                    \
      -0x1.18ae57cda0781p+1, -0x1.17d1fd1d29dffp+1, -0x1.16f8d3b714e4ep+1, -0x1.1622c1e3c0978p+1,                    \
      -0x1.154faf2336fd6p+1, -0x1.147f8419a51f3p+1, -0x1.13b22a7d5685cp+1, -0x1.12e78d0610916p+1,                    \
      -0x1.121f975dadd87p+1, -0x1.115a3611dd0f3p+1, -0x1.10975686e9e10p+1, -0x1.0fd6e6eb78bebp+1,                    \
      -0x1.0f18d62d20ed5p+1, -0x1.0e5d13edd22aep+1, -0x1.0da39079f50a9p+1, -0x1.0cec3cbf36cb8p+1,                    \
      -0x1.0c370a43f2d58p+1, -0x1.0b83eb1f2d58bp+1, -0x1.0ad2d1f113aaap+1, -0x1.0a23b1dbf8085p+1,                    \
      -0x1.09767e7dbf517p+1, -0x1.08cb2be9b8218p+1, -0x1.0821aea2d370ep+1, -0x1.0779fb9637900p+1,                    \
      -0x1.06d4081626edap+1, -0x1.062fc9d534a41p+1, -0x1.058d36e1c14b0p+1, -0x1.04ec45a1bafddp+1,                    \
      -0x1.044cecce9bedcp+1, -0x1.03af2371a33aap+1, -0x1.0312e0e044204p+1, -0x1.02781cb8c7d56p+1,                    \
      -0x1.01decedf1ec30p+1, -0x1.0146ef79ddfb9p+1, -0x1.00b076ef66153p+1, -0x1.001b5de330c0cp+1,                    \
      -0x1.ff0f3a6685554p+0, -0x1.fdea5beb7ebeep+0, -0x1.fcc812ed3a31bp+0, -0x1.fba8526aecfc6p+0,                    \
      -0x1.fa8b0dc6f10e0p+0, -0x1.f97038c2d59e6p+0, -0x1.f857c77ba1947p+0, -0x1.f741ae6644bd3p+0,                    \
      -0x1.f62de24c35181p+0, -0x1.f51c584835aeep+0, -0x1.f40d05c344971p+0, -0x1.f2ffe071ade63p+0,                    \
      -0x1.f1f4de504188cp+0, -0x1.f0ebf5a1aa074p+0, -0x1.efe51cebe26d6p+0, -0x1.eee04af5c9a02p+0,                    \
      -0x1.eddd76c4d1892p+0, -0x1.ecdc979ac89ddp+0, -0x1.ebdda4f3bc58fp+0, -0x1.eae09683f359ep+0,                    \
      -0x1.e9e56435fdea8p+0, -0x1.e8ec0628dbc84p+0, -0x1.e7f474ae3613ep+0, -0x1.e6fea848ac672p+0,                    \
      -0x1.e60a99aa34180p+0, -0x1.e51841b288be6p+0, -0x1.e427996dad269p+0, -0x1.e3389a127bdeep+0,                    \
      -0x1.e24b3d01469dap+0, -0x1.e15f7bc283cb4p+0, -0x1.e0755005897efp+0, -0x1.df8cb39f554e3p+0,                    \
      -0x1.dea5a08960523p+0, -0x1.ddc010e07ed0cp+0, -0x1.dcdbfee3cb020p+0, -0x1.dbf964f39a6a6p+0,                    \
      -0x1.db183d907d52dp+0, -0x1.da38835a47e54p+0, -0x1.d95a310f2482dp+0, -0x1.d87d418aaee60p+0,                    \
      -0x1.d7a1afc517b04p+0, -0x1.d6c776d25002ap+0, -0x1.d5ee91e13cc83p+0, -0x1.d516fc3af15dep+0,                    \
      -0x1.d440b141f1439p+0, -0x1.d36bac71788dap+0, -0x1.d297e95ccacb3p+0, -0x1.d1c563ae881b5p+0,                    \
      -0x1.d0f417280830bp+0, -0x1.d023ffa0bb03ap+0, -0x1.cf5519058ef64p+0, -0x1.ce875f585c336p+0,                    \
      -0x1.cdbaceaf55101p+0, -0x1.ccef63347b3bdp+0, -0x1.cc25192519917p+0, -0x1.cb5becd14253ep+0,                    \
      -0x1.ca93da9b51b05p+0, -0x1.c9ccdef774557p+0, -0x1.c906f66b31fa5p+0, -0x1.c8421d8cfbad5p+0,                    \
      -0x1.c77e5103bdc3bp+0, -0x1.c6bb8d86754a3p+0, -0x1.c5f9cfdbc8d02p+0, -0x1.c53914d9a4705p+0,                    \
      -0x1.c4795964d8f71p+0, -0x1.c3ba9a70be059p+0, -0x1.c2fcd4fed71bep+0, -0x1.c240061e7b678p+0,                    \
      -0x1.c1842aec80411p+0, -0x1.c0c94092e63eap+0, -0x1.c00f444888c3cp+0, -0x1.bf563350cff63p+0,                    \
      -0x1.be9e0afb6503ap+0, -0x1.bde6c8a3e8a20p+0, -0x1.bd3069b1abb85p+0, -0x1.bc7aeb976a183p+0,                    \
      -0x1.bbc64bd3073c0p+0, -0x1.bb1287ed4cf1bp+0, -0x1.ba5f9d79abe51p+0, -0x1.b9ad8a15fdf7bp+0,                    \
      -0x1.b8fc4b6a4a57cp+0, -0x1.b84bdf288b446p+0, -0x1.b79c430c75743p+0, -0x1.b6ed74db410d0p+0,                    \
      -0x1.b63f726374227p+0, -0x1.b592397caeaafp+0, -0x1.b4e5c80777e2dp+0, -0x1.b43a1bed0d0d2p+0,                    \
      -0x1.b38f331f318acp+0, -0x1.b2e50b98003aep+0, -0x1.b23ba359be19fp+0, -0x1.b192f86eae14ep+0,                    \
      -0x1.b0eb08e8e608ap+0, -0x1.b043d2e224e20p+0, -0x1.af9d547ba9d6bp+0, -0x1.aef78bde0cac5p+0,                    \
      -0x1.ae5277391708bp+0, -0x1.adae14c39ebf3p+0, -0x1.ad0a62bb61165p+0, -0x1.ac675f64defc4p+0,                    \
      -0x1.abc5090b3a233p+0, -0x1.ab235e0013002p+0, -0x1.aa825c9b67a24p+0, -0x1.a9e2033b735fcp+0,                    \
      -0x1.a94250448f4e2p+0, -0x1.a8a3422113840p+0, -0x1.a804d741391b7p+0, -0x1.a7670e1afcee5p+0,                    \
      -0x1.a6c9e52a030c0p+0, -0x1.a62d5aef7addbp+0, -0x1.a5916df203f72p+0, -0x1.a4f61cbd938e1p+0,                    \
      -0x1.a45b65e35a94ep+0, -0x1.a3c147f9ac6fdp+0, -0x1.a327c19be646bp+0, -0x1.a28ed16a56e7bp+0,                    \
      -0x1.a1f6760a273dfp+0, -0x1.a15eae2543512p+0, -0x1.a0c7786a43cfcp+0, -0x1.a030d38c581dep+0,                    \
      -0x1.9f9abe4330e36p+0, -0x1.9f05374aeb195p+0, -0x1.9e703d63fb8fcp+0, -0x1.9ddbcf531aec3p+0,                    \
      -0x1.9d47ebe132188p+0, -0x1.9cb491db47260p+0, -0x1.9c21c0126a999p+0, -0x1.9b8f755ba525bp+0,                    \
      -0x1.9afdb08fe5ca6p+0, -0x1.9a6c708bf0598p+0, -0x1.99dbb4304c5eap+0, -0x1.994b7a613464dp+0,                    \
      -0x1.98bbc206859acp+0, -0x1.982c8a0bafd11p+0, -0x1.979dd15fa5d08p+0, -0x1.970f96f4ce062p+0,                    \
      -0x1.9681d9c0f3845p+0, -0x1.95f498bd37543p+0, -0x1.9567d2e60216cp+0, -0x1.94db873af5f48p+0,                    \
      -0x1.944fb4bee0d74p+0, -0x1.93c45a77aeee8p+0, -0x1.9339776e5d7bcp+0, -0x1.92af0aaeede39p+0,                    \
      -0x1.9225134859055p+0, -0x1.919b904c82d27p+0, -0x1.911280d02e292p+0, -0x1.9089e3eaf0ed9p+0,                    \
      -0x1.9001b8b728603p+0, -0x1.8f79fe51edb22p+0, -0x1.8ef2b3db0ad1fp+0, -0x1.8e6bd874ef741p+0,                    \
      -0x1.8de56b44a6522p+0, -0x1.8d5f6b71caa16p+0, -0x1.8cd9d8267dbe1p+0, -0x1.8c54b08f5d0b9p+0,                    \
      -0x1.8bcff3db78067p+0, -0x1.8b4ba13c4689ep+0, -0x1.8ac7b7e59f439p+0, -0x1.8a44370dae588p+0,                    \
      -0x1.89c11decec379p+0, -0x1.893e6bbe14996p+0, -0x1.88bc1fbe1dabcp+0, -0x1.883a392c2f6a0p+0,                    \
      -0x1.87b8b7499b1cbp+0, -0x1.87379959d3059p+0, -0x1.86b6dea262315p+0, -0x1.8636866ae4728p+0,                    \
      -0x1.85b68ffcfe816p+0, -0x1.8536faa45642fp+0, -0x1.84b7c5ae8b32fp+0, -0x1.8438f06b2ef3dp+0,                    \
      -0x1.83ba7a2bbdfffp+0, -0x1.833c6243987e3p+0, -0x1.82bea807fb388p+0, -0x1.82414acff8b1dp+0,                    \
      -0x1.81c449f4725e2p+0, -0x1.8147a4d011f80p+0, -0x1.80cb5abf42f6dp+0, -0x1.804f6b202c211p+0,                    \
      -0x1.7fd3d552a93dap+0, -0x1.7f5898b844e1cp+0, -0x1.7eddb4b4325a8p+0, -0x1.7e6328ab47b16p+0,                    \
      -0x1.7de8f403f7ce3p+0, -0x1.7d6f16264cb0cp+0, -0x1.7cf58e7be1c65p+0, -0x1.7c7c5c6fde572p+0,                    \
      -0x1.7c037f6ef00d2p+0, -0x1.7b8af6e74593dp+0, -0x1.7b12c248894ebp+0, -0x1.7a9ae103dc272p+0,                    \
      -0x1.7a23528bd0725p+0, -0x1.79ac165464ebcp+0, -0x1.79352bd2ffc71p+0, -0x1.78be927e69d58p+0,                    \
      -0x1.784849cec9c34p+0, -0x1.77d2513d9f670p+0, -0x1.775ca845bf253p+0, -0x1.76e74e634d69cp+0,                    \
      -0x1.76724313ba32ep+0, -0x1.75fd85d5bcaf2p+0, -0x1.758916294eeedp+0, -0x1.7514f38fa9a72p+0,                    \
      -0x1.74a11d8b40077p+0, -0x1.742d939fbb9f1p+0, -0x1.73ba5551f855cp+0, -0x1.7347622800744p+0,                    \
      -0x1.72d4b9a908bcbp+0, -0x1.72625b5d6c946p+0, -0x1.71f046ceaa3c0p+0, -0x1.717e7b875f196p+0,                    \
      -0x1.710cf913440e8p+0, -0x1.709bbeff29e03p+0, -0x1.702accd8f5ac3p+0, -0x1.6fba222f9d6c3p+0,                    \
      -0x1.6f49be9324886p+0, -0x1.6ed9a19498775p+0, -0x1.6e69cac60d6a5p+0, -0x1.6dfa39ba9b094p+0,                    \
      -0x1.6d8aee065939cp+0, -0x1.6d1be73e5cf3cp+0, -0x1.6cad24f8b5230p+0, -0x1.6c3ea6cc6793ep+0,                    \
      -0x1.6bd06c516dee1p+0, -0x1.6b627520b2b90p+0, -0x1.6af4c0d40e6e1p+0, -0x1.6a874f0644948p+0,                    \
      -0x1.6a1a1f5300e9bp+0, -0x1.69ad3156d4947p+0, -0x1.694084af33621p+0, -0x1.68d418fa710fcp+0,                    \
      -0x1.6867edd7be9c8p+0, -0x1.67fc02e727a78p+0, -0x1.679057c98fd65p+0, -0x1.6724ec20b0470p+0,                    \
      -0x1.66b9bf8f150a4p+0, -0x1.664ed1b81aa88p+0, -0x1.65e4223febaf4p+0, -0x1.6579b0cb7e489p+0,                    \
      -0x1.650f7d0091db1p+0, -0x1.64a58685acb2bp+0, -0x1.643bcd0219b2ep+0, -0x1.63d2501de6108p+0,                    \
      -0x1.63690f81df151p+0, -0x1.63000ad78fe93p+0, -0x1.629741c93f684p+0, -0x1.622eb401edfbbp+0,                    \
      -0x1.61c6612d537d8p+0, -0x1.615e48f7dd239p+0, -0x1.60f66b0eab71dp+0, -0x1.608ec71f9033fp+0,                    \
      -0x1.60275cd90c7eep+0, -0x1.5fc02bea4eb93p+0, -0x1.5f59340330aa3p+0, -0x1.5ef274d43590cp+0,                    \
      -0x1.5e8bee0e8840ap+0, -0x1.5e259f63f9465p+0, -0x1.5dbf8886fd11cp+0, -0x1.5d59a92aaa27bp+0,                    \
      -0x1.5cf40102b7592p+0, -0x1.5c8e8fc37a013p+0, -0x1.5c295521e449ap+0, -0x1.5bc450d383743p+0,                    \
      -0x1.5b5f828e7e2b7p+0, -0x1.5afaea0992d8cp+0, -0x1.5a9686fc16002p+0, -0x1.5a32591df0a17p+0,                    \
      -0x1.59ce60279ea01p+0, -0x1.596a9bd22d2f3p+0, -0x1.59070bd739447p+0, -0x1.58a3aff0ee0eap+0,                    \
      -0x1.584087da03731p+0, -0x1.57dd934dbc8f6p+0, -0x1.577ad207e6401p+0, -0x1.571843c4d5acdp+0,                    \
      -0x1.56b5e84166d93p+0, -0x1.5653bf3afb3a8p+0, -0x1.55f1c86f7852ep+0, -0x1.5590039d464efp+0,                    \
      -0x1.552e70834eabap+0, -0x1.54cd0ee0fadcap+0, -0x1.546bde7632facp+0, -0x1.540adf035c745p+0,                    \
      -0x1.53aa104958c33p+0, -0x1.5349720984265p+0, -0x1.52e90405b45ffp+0, -0x1.5288c60037781p+0,                    \
      -0x1.5228b7bbd2823p+0, -0x1.51c8d8fbc0682p+0, -0x1.51692983b0b7dp+0, -0x1.5109a917c675cp+0,                    \
      -0x1.50aa577c96f2fp+0, -0x1.504b347728a69p+0, -0x1.4fec3fccf20b0p+0, -0x1.4f8d7943d8800p+0,                    \
      -0x1.4f2ee0a22f2e2p+0, -0x1.4ed075aeb5efep+0, -0x1.4e723830983d6p+0, -0x1.4e1427ef6c1adp+0,                    \
      -0x1.4db644b3310c4p+0, -0x1.4d588e444f0a4p+0, -0x1.4cfb046b957c2p+0, -0x1.4c9da6f23a33bp+0,                    \
      -0x1.4c4075a1d86d6p+0, -0x1.4be370446fd2ep+0, -0x1.4b8696a46380dp+0, -0x1.4b29e88c790fep+0,                    \
      -0x1.4acd65c7d7a12p+0, -0x1.4a710e2206ebfp+0, -0x1.4a14e166ee511p+0, -0x1.49b8df62d3ee7p+0,                    \
      -0x1.495d07e25bb72p+0, -0x1.49015ab2868dbp+0, -0x1.48a5d7a0b160fp+0, -0x1.484a7e7a944c5p+0,                    \
      -0x1.47ef4f0e41ba2p+0, -0x1.4794492a25887p+0, -0x1.47396c9d04313p+0, -0x1.46deb935f9f47p+0,                    \
      -0x1.46842ec47a04ep+0, -0x1.4629cd184db78p+0, -0x1.45cf940193b59p+0, -0x1.45758350bf303p+0,                    \
      -0x1.451b9ad697170p+0, -0x1.44c1da6435521p+0, -0x1.446841cb05fbap+0, -0x1.440ed0dcc69f1p+0,                    \
      -0x1.43b5876b85778p+0, -0x1.435c6549a0b30p+0, -0x1.43036a49c5b5bp+0, -0x1.42aa963ef060dp+0,                    \
      -0x1.4251e8fc6a5b3p+0, -0x1.41f96255ca5bap+0, -0x1.41a1021ef3757p+0, -0x1.4148c82c1467dp+0,                    \
      -0x1.40f0b451a6ee3p+0, -0x1.4098c6646f12ap+0, -0x1.4040fe397a839p+0, -0x1.3fe95ba61fe93p+0,                    \
      -0x1.3f91de7ffe3edp+0, -0x1.3f3a869cfc2d4p+0, -0x1.3ee353d347670p+0, -0x1.3e8c45f954060p+0,                    \
      -0x1.3e355ce5dbec3p+0, -0x1.3dde986fde252p+0, -0x1.3d87f86e9e491p+0, -0x1.3d317cb9a3e23p+0,                    \
      -0x1.3cdb2528b9d49p+0, -0x1.3c84f193edc52p+0, -0x1.3c2ee1d38f858p+0, -0x1.3bd8f5c0307eep+0,                    \
      -0x1.3b832d32a3201p+0, -0x1.3b2d8803fa4cbp+0, -0x1.3ad8060d88cdbp+0, -0x1.3a82a728e0c40p+0,                    \
      -0x1.3a2d6b2fd31bcp+0, -0x1.39d851fc6f02ap+0, -0x1.39835b69015dcp+0, -0x1.392e87501442cp+0,                    \
      -0x1.38d9d58c6e70fp+0, -0x1.388545f912cd5p+0, -0x1.3830d8713fdecp+0, -0x1.37dc8cd06f4c2p+0,                    \
      -0x1.378862f2555bdp+0, -0x1.37345ab2e074ep+0, -0x1.36e073ee38a0ep+0, -0x1.368cae80bf0f3p+0,                    \
      -0x1.36390a470d9adp+0, -0x1.35e5871df64f7p+0, -0x1.359224e282f19p+0, -0x1.353ee371f486cp+0,                    \
      -0x1.34ebc2a9c2e06p+0, -0x1.3498c2679c25bp+0, -0x1.3445e28964612p+0, -0x1.33f322ed350dbp+0,                    \
      -0x1.33a083715ca5ap+0, -0x1.334e03f45e329p+0, -0x1.32fba454f0de8p+0, -0x1.32a96471ff866p+0,                    \
      -0x1.3257442aa84d3p+0, -0x1.3205435e3c30dp+0, -0x1.31b361ec3e9f9p+0, -0x1.31619fb4650ecp+0,                    \
      -0x1.310ffc969692dp+0, -0x1.30be7872eb782p+0, -0x1.306d1329acdcbp+0, -0x1.301bcc9b544b7p+0,                    \
      -0x1.2fcaa4a88b57dp+0, -0x1.2f799b322b3bap+0, -0x1.2f28b0193c73ep+0, -0x1.2ed7e33ef660ap+0,                    \
      -0x1.2e873484bee4cp+0, -0x1.2e36a3cc2a070p+0, -0x1.2de630f6f9937p+0, -0x1.2d95dbe71cbecp+0,                    \
      -0x1.2d45a47eafca0p+0, -0x1.2cf58a9ffba6cp+0, -0x1.2ca58e2d759d9p+0, -0x1.2c55af09bef3bp+0,                    \
      -0x1.2c05ed17a492cp+0, -0x1.2bb6483a1eb13p+0, -0x1.2b66c054507b1p+0, -0x1.2b17554987bc4p+0,                    \
      -0x1.2ac806fd3c8aep+0, -0x1.2a78d55310f3bp+0, -0x1.2a29c02ed0a5cp+0, -0x1.29dac77470a03p+0,                    \
      -0x1.298beb080ee04p+0, -0x1.293d2acdf2102p+0, -0x1.28ee86aa89368p+0, -0x1.289ffe826b674p+0,                    \
      -0x1.2851923a57749p+0, -0x1.280341b733a11p+0, -0x1.27b50cde0d524p+0, -0x1.2766f39418c42p+0,                    \
      -0x1.2718f5beb0bd9p+0, -0x1.26cb134356451p+0, -0x1.267d4c07b0566p+0, -0x1.262f9ff18b994p+0,                    \
      -0x1.25e20ee6da17fp+0, -0x1.259498cdb2f75p+0, -0x1.25473d8c522f5p+0, -0x1.24f9fd091843bp+0,                    \
      -0x1.24acd72a89fe7p+0, -0x1.245fcbd75029bp+0, -0x1.2412daf6374b0p+0, -0x1.23c6046e2f5f7p+0,                    \
      -0x1.237948264b972p+0, -0x1.232ca605c2135p+0, -0x1.22e01df3eba31p+0, -0x1.2293afd843828p+0,                    \
      -0x1.22475b9a6718ap+0, -0x1.21fb212215b7ap+0, -0x1.21af0057305c9p+0, -0x1.2162f921b9703p+0,                    \
      -0x1.21170b69d4881p+0, -0x1.20cb3717c6287p+0, -0x1.207f7c13f386fp+0, -0x1.2033da46e24cdp+0,                    \
      -0x1.1fe85199385bap+0, -0x1.1f9ce1f3bb8ffp+0, -0x1.1f518b3f51873p+0, -0x1.1f064d64ff63bp+0,                    \
      -0x1.1ebb284de993ap+0, -0x1.1e701be353962p+0, -0x1.1e25280e9fc2ep+0, -0x1.1dda4cb94f109p+0,                    \
      -0x1.1d8f89cd00dd8p+0, -0x1.1d44df3372b75p+0, -0x1.1cfa4cd68023ep+0, -0x1.1cafd2a0226b0p+0,                    \
      -0x1.1c65707a705f8p+0, -0x1.1c1b264f9e29ep+0, -0x1.1bd0f409fd132p+0, -0x1.1b86d993fb4fep+0,                    \
      -0x1.1b3cd6d823cbcp+0, -0x1.1af2ebc11df5fp+0, -0x1.1aa91839ad8dap+0, -0x1.1a5f5c2cb26f1p+0,                    \
      -0x1.1a15b78528612p+0, -0x1.19cc2a2e26e31p+0, -0x1.1982b412e0fb6p+0, -0x1.1939551ea505ep+0,                    \
      -0x1.18f00d3cdc839p+0, -0x1.18a6dc590bea6p+0, -0x1.185dc25ed274ep+0, -0x1.1814bf39e9f2cp+0,                    \
      -0x1.17cbd2d6269a5p+0, -0x1.1782fd1f76d94p+0, -0x1.173a3e01e326cp+0, -0x1.16f195698dd56p+0,                    \
      -0x1.16a90342b2e5fp+0, -0x1.16608779a7da2p+0, -0x1.161821fadb87fp+0, -0x1.15cfd2b2d5ed8p+0,                    \
      -0x1.1587998e3804fp+0, -0x1.153f7679bb990p+0, -0x1.14f76962331a3p+0, -0x1.14af723489730p+0,                    \
      -0x1.146790ddc1deep+0, -0x1.141fc54af7bebp+0, -0x1.13d80f695e703p+0, -0x1.13906f2641241p+0,                    \
      -0x1.1348e46f02b53p+0, -0x1.13016f311d7f9p+0, -0x1.12ba0f5a23387p+0, -0x1.1272c4d7bcc60p+0,                    \
      -0x1.122b8f97aa182p+0, -0x1.11e46f87c200ap+0, -0x1.119d6495f20c9p+0, -0x1.11566eb03e5d9p+0,                    \
      -0x1.110f8dc4c1832p+0, -0x1.10c8c1c1ac551p+0, -0x1.10820a9545cd9p+0, -0x1.103b682deae42p+0,                    \
      -0x1.0ff4da7a0e67cp+0, -0x1.0fae616838dadp+0, -0x1.0f67fce7084ecp+0, -0x1.0f21ace5303f0p+0,                    \
      -0x1.0edb7151796e2p+0, -0x1.0e954a1ac1c18p+0, -0x1.0e4f372ffc1eap+0, -0x1.0e09388030477p+0,                    \
      -0x1.0dc34dfa7ab86p+0, -0x1.0d7d778e0c857p+0, -0x1.0d37b52a2b37ep+0, -0x1.0cf206be30ad1p+0,                    \
      -0x1.0cac6c398af45p+0, -0x1.0c66e58bbc2dap+0, -0x1.0c2172a45a689p+0, -0x1.0bdc13730f83fp+0,                    \
      -0x1.0b96c7e7990cep+0, -0x1.0b518ff1c81e8p+0, -0x1.0b0c6b8181423p+0, -0x1.0ac75a86bc4fap+0,                    \
      -0x1.0a825cf1844dap+0, -0x1.0a3d72b1f7527p+0, -0x1.09f89bb846650p+0, -0x1.09b3d7f4b55e8p+0,                    \
      -0x1.096f27579acb4p+0, -0x1.092a89d15fccep+0, -0x1.08e5ff527ffc2p+0, -0x1.08a187cb894b6p+0,                    \
      -0x1.085d232d1be89p+0, -0x1.0818d167ea204p+0, -0x1.07d4926cb840dp+0, -0x1.0790662c5c7ccp+0,                    \
      -0x1.074c4c97beceep+0, -0x1.0708459fd8dd9p+0, -0x1.06c45135b5decp+0, -0x1.06806f4a727bap+0,                    \
      -0x1.063c9fcf3cb52p+0, -0x1.05f8e2b553c89p+0, -0x1.05b537ee08145p+0, -0x1.05719f6abafc2p+0,                    \
      -0x1.052e191cdecf0p+0, -0x1.04eaa4f5f6ac4p+0, -0x1.04a742e79668ep+0, -0x1.0463f2e362755p+0,                    \
      -0x1.0420b4db0fc39p+0, -0x1.03dd88c063ad7p+0, -0x1.039a6e8533da4p+0, -0x1.0357661b66261p+0,                    \
      -0x1.03146f74f0883p+0, -0x1.02d18a83d8f9ep+0, -0x1.028eb73a355dap+0, -0x1.024bf58a2b66ap+0,                    \
      -0x1.02094565f0802p+0, -0x1.01c6a6bfc9b49p+0, -0x1.0184198a0b96bp+0, -0x1.01419db71a283p+0,                    \
      -0x1.00ff333968c31p+0, -0x1.00bcda037a015p+0, -0x1.007a9207dfa5ap+0, -0x1.00385b393a847p+0,                    \
      -0x1.ffec6b1474d9cp-1, -0x1.ff6841db3c225p-1, -0x1.fee43aac65e1dp-1, -0x1.fe60556daa834p-1,                    \
      -0x1.fddc9204dfb24p-1, -0x1.fd58f057f82d9p-1, -0x1.fcd5704d039afp-1, -0x1.fc5211ca2e5c8p-1,                    \
      -0x1.fbced4b5c163fp-1, -0x1.fb4bb8f62207cp-1, -0x1.fac8be71d1d93p-1, -0x1.fa45e50f6e78ep-1,                    \
      -0x1.f9c32cb5b16cfp-1, -0x1.f940954b6ff6cp-1, -0x1.f8be1eb79aeacp-1, -0x1.f83bc8e13e853p-1,                    \
      -0x1.f7b993af82426p-1, -0x1.f7377f09a8b63p-1, -0x1.f6b58ad70f633p-1, -0x1.f633b6ff2e929p-1,                    \
      -0x1.f5b20369992c6p-1, -0x1.f5306ffdfc90bp-1, -0x1.f4aefca4206f8p-1, -0x1.f42da943e6a22p-1,                    \
      -0x1.f3ac75c54b053p-1, -0x1.f32b621063511p-1, -0x1.f2aa6e0d5ef50p-1, -0x1.f22999a486f0cp-1,                    \
      -0x1.f1a8e4be3daebp-1, -0x1.f1284f42fedf8p-1, -0x1.f0a7d91b5f53fp-1, -0x1.f02782300cd9dp-1,                    \
      -0x1.efa74a69ce15cp-1, -0x1.ef2731b182601p-1, -0x1.eea737f021a06p-1, -0x1.ee275d0ebc2a5p-1,                    \
      -0x1.eda7a0f67a99cp-1, -0x1.ed2803909dafap-1, -0x1.eca884c67e2f1p-1, -0x1.ec2924818cbb0p-1,                    \
      -0x1.eba9e2ab51b31p-1, -0x1.eb2abf2d6d128p-1, -0x1.eaabb9f1964cbp-1, -0x1.ea2cd2e19c2cdp-1,                    \
      -0x1.e9ae09e764b3dp-1, -0x1.e92f5eececf66p-1, -0x1.e8b0d1dc48fdep-1, -0x1.e832629fa3a5dp-1,                    \
      -0x1.e7b411213e7bdp-1, -0x1.e735dd4b719f9p-1, -0x1.e6b7c708aba28p-1, -0x1.e639ce437167ep-1,                    \
      -0x1.e5bbf2e65e056p-1, -0x1.e53e34dc22a35p-1, -0x1.e4c0940f865d9p-1, -0x1.e443106b66250p-1,                    \
      -0x1.e3c5a9dab49ffp-1, -0x1.e34860487a0c0p-1, -0x1.e2cb339fd41ffp-1, -0x1.e24e23cbf5ed2p-1,                    \
      -0x1.e1d130b827c1bp-1, -0x1.e1545a4fc70acp-1, -0x1.e0d7a07e46377p-1, -0x1.e05b032f2c9a8p-1,                    \
      -0x1.dfde824e164dfp-1, -0x1.df621dc6b4162p-1, -0x1.dee5d584cb44bp-1, -0x1.de69a974359bfp-1,                    \
      -0x1.dded9980e1331p-1, -0x1.dd71a596d0597p-1, -0x1.dcf5cda2197acp-1, -0x1.dc7a118ee7034p-1,                    \
      -0x1.dbfe71497744ep-1, -0x1.db82ecbe1c5a8p-1, -0x1.db0783d93c0dap-1, -0x1.da8c36874fbb6p-1,                    \
      -0x1.da1104b4e4394p-1, -0x1.d995ee4e99ba7p-1, -0x1.d91af34123b5ep-1, -0x1.d8a0137948cbap-1,                    \
      -0x1.d8254ee3e2aa6p-1, -0x1.d7aaa56dddf5ep-1, -0x1.d73017043a2d3p-1, -0x1.d6b5a3940990fp-1,                    \
      -0x1.d63b4b0a7109fp-1, -0x1.d5c10d54a80f6p-1, -0x1.d546ea5ff88eap-1, -0x1.d4cce219bed25p-1,                    \
      -0x1.d452f46f6967dp-1, -0x1.d3d9214e7908fp-1, -0x1.d35f68a480823p-1, -0x1.d2e5ca5f249a6p-1,                    \
      -0x1.d26c466c1bfb4p-1, -0x1.d1f2dcb92f191p-1, -0x1.d1798d34381a2p-1, -0x1.d10057cb22c0fp-1,                    \
      -0x1.d0873c6bec528p-1, -0x1.d00e3b04a380cp-1, -0x1.cf9553836851fp-1, -0x1.cf1c85d66c0b0p-1,                    \
      -0x1.cea3d1ebf1176p-1, -0x1.ce2b37b24af2fp-1, -0x1.cdb2b717de134p-1, -0x1.cd3a500b1fd14p-1,                    \
      -0x1.ccc2027a9652ap-1, -0x1.cc49ce54d873fp-1, -0x1.cbd1b3888db23p-1, -0x1.cb59b2046e159p-1,                    \
      -0x1.cae1c9b7421b1p-1, -0x1.ca69fa8fe29fap-1, -0x1.c9f2447d38c98p-1, -0x1.c97aa76e3df47p-1,                    \
      -0x1.c9032351fb9b3p-1, -0x1.c88bb8178b42dp-1, -0x1.c81465ae1666cp-1, -0x1.c79d2c04d6625p-1,                    \
      -0x1.c7260b0b145d3p-1, -0x1.c6af02b02936ap-1, -0x1.c63812e37d716p-1, -0x1.c5c13b94891edp-1,                    \
      -0x1.c54a7cb2d3caep-1, -0x1.c4d3d62df468cp-1, -0x1.c45d47f5913e5p-1, -0x1.c3e6d1f95fd06p-1,                    \
      -0x1.c370742924cf8p-1, -0x1.c2fa2e74b4045p-1, -0x1.c28400cbf03bdp-1, -0x1.c20deb1ecb34ap-1,                    \
      -0x1.c197ed5d458b6p-1, -0x1.c12207776ea7bp-1, -0x1.c0ac395d64a9ep-1, -0x1.c03682ff5457bp-1,                    \
      -0x1.bfc0e44d79094p-1, -0x1.bf4b5d381c978p-1, -0x1.bed5edaf97492p-1, -0x1.be6095a44fc00p-1,                    \
      -0x1.bdeb5506bae77p-1, -0x1.bd762bc75be23p-1, -0x1.bd0119d6c3f80p-1, -0x1.bc8c1f259283fp-1,                    \
      -0x1.bc173ba474e2dp-1, -0x1.bba26f4426612p-1, -0x1.bb2db9f5702a2p-1, -0x1.bab91ba92935dp-1,                    \
      -0x1.ba44945036379p-1, -0x1.b9d023db898d6p-1, -0x1.b95bca3c232efp-1, -0x1.b8e78763109b6p-1,                    \
      -0x1.b8735b416cc9dp-1, -0x1.b7ff45c860179p-1, -0x1.b78b46e92037ep-1, -0x1.b7175e94f0239p-1,                    \
      -0x1.b6a38cbd2007ap-1, -0x1.b62fd1530d359p-1, -0x1.b5bc2c4822136p-1, -0x1.b5489d8dd60a9p-1,                    \
      -0x1.b4d52515ad77cp-1, -0x1.b461c2d1399c7p-1, -0x1.b3ee76b2188d3p-1, -0x1.b37b40a9f5229p-1,                    \
      -0x1.b30820aa86e9cp-1, -0x1.b29516a592146p-1, -0x1.b222228ce7693p-1, -0x1.b1af44526434cp-1,                    \
      -0x1.b13c7be7f2398p-1, -0x1.b0c9c93f87a18p-1, -0x1.b0572c4b26eeap-1, -0x1.afe4a4fcdeeb3p-1,                    \
      -0x1.af723346ca9bfp-1, -0x1.aeffd71b11301p-1, -0x1.ae8d906be5f37p-1, -0x1.ae1b5f2b883eap-1,                    \
      -0x1.ada9434c4369bp-1, -0x1.ad373cc06ebcbp-1, -0x1.acc54b7a6d618p-1, -0x1.ac536f6cae558p-1,                    \
      -0x1.abe1a889ac5b1p-1, -0x1.ab6ff6c3edebap-1, -0x1.aafe5a0e05296p-1, -0x1.aa8cd25a8fd18p-1,                    \
      -0x1.aa1b5f9c372d9p-1, -0x1.a9aa01c5b0069p-1, -0x1.a938b8c9ba966p-1, -0x1.a8c7849b227a7p-1,                    \
      -0x1.a856652cbea60p-1, -0x1.a7e55a717154bp-1, -0x1.a774645c27fc9p-1, -0x1.a70382dfdb41ap-1,                    \
      -0x1.a692b5ef8ee77p-1, -0x1.a621fd7e51c50p-1, -0x1.a5b1597f3db65p-1, -0x1.a540c9e577909p-1,                    \
      -0x1.a4d04ea42f144p-1, -0x1.a45fe7ae9ee0bp-1, -0x1.a3ef94f80c669p-1, -0x1.a37f5673c7dc6p-1,                    \
      -0x1.a30f2c152c301p-1, -0x1.a29f15cf9efbfp-1, -0x1.a22f13969078fp-1, -0x1.a1bf255d7b72dp-1,                    \
      -0x1.a14f4b17e53b5p-1, -0x1.a0df84b95d9e5p-1, -0x1.a06fd2357ed4fp-1, -0x1.a000337fed79dp-1,                    \
      -0x1.9f90a88c587cbp-1, -0x1.9f21314e7916ap-1, -0x1.9eb1cdba12bd5p-1, -0x1.9e427dc2f3181p-1,                    \
      -0x1.9dd3415cf1f39p-1, -0x1.9d64187bf135ap-1, -0x1.9cf50313dcd23p-1, -0x1.9c860118aabf1p-1,                    \
      -0x1.9c17127e5ae8dp-1, -0x1.9ba83738f726bp-1, -0x1.9b396f3c932f7p-1, -0x1.9acaba7d4c8e7p-1,                    \
      -0x1.9a5c18ef4a974p-1, -0x1.99ed8a86be5b1p-1, -0x1.997f0f37e29d7p-1, -0x1.9910a6f6fbc8fp-1,                    \
      -0x1.98a251b857e43p-1, -0x1.98340f704e86dp-1, -0x1.97c5e01340ce9p-1, -0x1.9757c3959953fp-1,                    \
      -0x1.96e9b9ebcc203p-1, -0x1.967bc30a56a1dp-1, -0x1.960ddee5bfa1fp-1, -0x1.95a00d72973a5p-1,                    \
      -0x1.95324ea576c97p-1, -0x1.94c4a27300e97p-1, -0x1.945708cfe1645p-1, -0x1.93e981b0cd2acp-1,                    \
      -0x1.937c0d0a82486p-1, -0x1.930eaad1c7db0p-1, -0x1.92a15afb6e068p-1, -0x1.92341d7c4decbp-1,                    \
      -0x1.91c6f24949a14p-1, -0x1.9159d9574c210p-1, -0x1.90ecd29b49471p-1, -0x1.907fde0a3dc38p-1,                    \
      -0x1.9012fb992f10dp-1, -0x1.8fa62b3d2b6aap-1, -0x1.8f396ceb49c33p-1, -0x1.8eccc098a9ba6p-1,                    \
      -0x1.8e60263a73934p-1, -0x1.8df39dc5d82b0p-1, -0x1.8d87273010eeep-1, -0x1.8d1ac26e5fd31p-1,                    \
      -0x1.8cae6f760f491p-1, -0x1.8c422e3c72359p-1, -0x1.8bd5feb6e3e84p-1, -0x1.8b69e0dac8119p-1,                    \
      -0x1.8afdd49d8ab9bp-1, -0x1.8a91d9f4a0371p-1, -0x1.8a25f0d585259p-1, -0x1.89ba1935be5d7p-1,                    \
      -0x1.894e530ad8e9bp-1, -0x1.88e29e4a69ff5p-1, -0x1.8876faea0ef41p-1, -0x1.880b68df6d362p-1,                    \
      -0x1.879fe82032429p-1, -0x1.873478a2139c8p-1, -0x1.86c91a5acec52p-1, -0x1.865dcd402931bp-1,                    \
      -0x1.85f29147f0434p-1, -0x1.85876667f93edp-1, -0x1.851c4c9621439p-1, -0x1.84b143c84d432p-1,                    \
      -0x1.84464bf469f7ep-1, -0x1.83db65106bde3p-1, -0x1.83708f124f2abp-1, -0x1.8305c9f017c1ep-1,                    \
      -0x1.829b159fd130ap-1, -0x1.823072178ea2ap-1, -0x1.81c5df4d6adbdp-1, -0x1.815b5d37882e5p-1,                    \
      -0x1.80f0ebcc1073ap-1, -0x1.80868b013503ap-1, -0x1.801c3acd2ead2p-1, -0x1.7fb1fb263dad5p-1,                    \
      -0x1.7f47cc02a9a7dp-1, -0x1.7eddad58c19f5p-1, -0x1.7e739f1edbecbp-1, -0x1.7e09a14b5637bp-1,                    \
      -0x1.7d9fb3d4956f2p-1, -0x1.7d35d6b105c0fp-1, -0x1.7ccc09d71a926p-1, -0x1.7c624d3d4e783p-1,                    \
      -0x1.7bf8a0da232f5p-1, -0x1.7b8f04a42194ep-1, -0x1.7b257891d99edp-1, -0x1.7abbfc99e253ap-1,                    \
      -0x1.7a5290b2d9c4bp-1, -0x1.79e934d365042p-1, -0x1.797fe8f2301f7p-1, -0x1.7916ad05ee178p-1,                    \
      -0x1.78ad810558d88p-1, -0x1.784464e73133fp-1, -0x1.77db58a23ed81p-1, -0x1.77725c2d50492p-1,                    \
      -0x1.77096f7f3ada4p-1, -0x1.76a0928edaa65p-1, -0x1.7637c55312886p-1, -0x1.75cf07c2cc152p-1,                    \
      -0x1.756659d4f792fp-1, -0x1.74fdbb808bf44p-1, -0x1.74952cbc86cefp-1, -0x1.742cad7fec56ap-1,                    \
      -0x1.73c43dc1c7549p-1, -0x1.735bdd7929228p-1, -0x1.72f38c9d29a1ap-1, -0x1.728b4b24e7359p-1,                    \
      -0x1.7223190786bc9p-1, -0x1.71baf63c3388fp-1, -0x1.7152e2ba1f5adp-1, -0x1.70eade788258ap-1,                    \
      -0x1.7082e96e9b090p-1, -0x1.701b0393ae4c4p-1, -0x1.6fb32cdf07557p-1, -0x1.6f4b6547f7a39p-1,                    \
      -0x1.6ee3acc5d6fc1p-1, -0x1.6e7c035003632p-1, -0x1.6e1468dde1160p-1, -0x1.6dacdd66da843p-1,                    \
      -0x1.6d4560e260495p-1, -0x1.6cddf347e9269p-1, -0x1.6c76948ef1fc7p-1, -0x1.6c0f44aefdc48p-1,                    \
      -0x1.6ba8039f958adp-1, -0x1.6b40d15848686p-1, -0x1.6ad9add0ab7c0p-1, -0x1.6a72990059e49p-1,                    \
      -0x1.6a0b92def4bb7p-1, -0x1.69a49b64230d2p-1, -0x1.693db28791d48p-1, -0x1.68d6d840f3f3bp-1,                    \
      -0x1.68700c88022edp-1, -0x1.68094f547b254p-1, -0x1.67a2a09e234c8p-1, -0x1.673c005cc4e99p-1,                    \
      -0x1.66d56e88300b7p-1, -0x1.666eeb183a84cp-1, -0x1.66087604bfe6ep-1, -0x1.65a20f45a17adp-1,                    \
      -0x1.653bb6d2c63c7p-1, -0x1.64d56ca41ad42p-1, -0x1.646f30b19191ap-1, -0x1.640902f322658p-1,                    \
      -0x1.63a2e360cadc3p-1, -0x1.633cd1f28e181p-1, -0x1.62d6cea074cbcp-1, -0x1.6270d9628d348p-1,                    \
      -0x1.620af230eb150p-1, -0x1.61a51903a7af1p-1, -0x1.613f4dd2e1bf1p-1, -0x1.60d99096bd756p-1,                    \
      -0x1.6073e14764726p-1, -0x1.600e3fdd05bf4p-1, -0x1.5fa8ac4fd5c9cp-1, -0x1.5f4326980e5e8p-1,                    \
      -0x1.5eddaeadeea3dp-1, -0x1.5e784489bb142p-1, -0x1.5e12e823bd784p-1, -0x1.5dad997444e32p-1,                    \
      -0x1.5d485873a5abdp-1, -0x1.5ce3251a39688p-1, -0x1.5c7dff605ee93p-1, -0x1.5c18e73e7a329p-1,                    \
      -0x1.5bb3dcacf478bp-1, -0x1.5b4edfa43c1a9p-1, -0x1.5ae9f01cc49bdp-1, -0x1.5a850e0f06a06p-1,                    \
      -0x1.5a2039737fe7cp-1, -0x1.59bb7242b3471p-1, -0x1.5956b87528a49p-1, -0x1.58f20c036cf2fp-1,                    \
      -0x1.588d6ce6122b5p-1, -0x1.5828db15af49fp-1, -0x1.57c4568ae0474p-1, -0x1.575fdf3e4614ap-1,                    \
      -0x1.56fb752886971p-1, -0x1.569718424ca1cp-1, -0x1.5632c88447f1bp-1, -0x1.55ce85e72d294p-1,                    \
      -0x1.556a5063b5cabp-1, -0x1.550627f2a033cp-1, -0x1.54a20c8caf98dp-1, -0x1.543dfe2aac002p-1,                    \
      -0x1.53d9fcc5623ddp-1, -0x1.53760855a3edbp-1, -0x1.531220d447708p-1, -0x1.52ae463a27e58p-1,                    \
      -0x1.524a788025270p-1, -0x1.51e6b79f23c58p-1, -0x1.518303900d02ep-1, -0x1.511f5c4bcece6p-1,                    \
      -0x1.50bbc1cb5bbf2p-1, -0x1.50583407ab109p-1, -0x1.4ff4b2f9b89dep-1, -0x1.4f913e9a84dcfp-1,                    \
      -0x1.4f2dd6e314dabp-1, -0x1.4eca7bcc72356p-1, -0x1.4e672d4fab19ep-1, -0x1.4e03eb65d23dfp-1,                    \
      -0x1.4da0b607fedd0p-1, -0x1.4d3d8d2f4cb26p-1, -0x1.4cda70d4dbf64p-1, -0x1.4c7760f1d158cp-1,                    \
      -0x1.4c145d7f55fe0p-1, -0x1.4bb1667697795p-1, -0x1.4b4e7bd0c7c99p-1, -0x1.4aeb9d871d549p-1,                    \
      -0x1.4a88cb92d2e32p-1, -0x1.4a2605ed279c9p-1, -0x1.49c34c8f5f030p-1, -0x1.49609f72c0ee9p-1,                    \
      -0x1.48fdfe909989cp-1, -0x1.489b69e2394d8p-1, -0x1.4838e160f4fc7p-1, -0x1.47d66506259f4p-1,                    \
      -0x1.4773f4cb2880ap-1, -0x1.471190a95f292p-1, -0x1.46af389a2f5b1p-1, -0x1.464cec97030eep-1,                    \
      -0x1.45eaac99486e7p-1, -0x1.4588789a71d23p-1, -0x1.45265093f5bc0p-1, -0x1.44c4347f4ed41p-1,                    \
      -0x1.44622455fbe49p-1, -0x1.440020117fd66p-1, -0x1.439e27ab61ac1p-1, -0x1.433c3b1d2c7f3p-1,                    \
      -0x1.42da5a606f7bep-1, -0x1.4278856ebddd5p-1, -0x1.4216bc41aee92p-1, -0x1.41b4fed2ddecfp-1,                    \
      -0x1.41534d1bea399p-1, -0x1.40f1a716771f8p-1, -0x1.40900cbc2beb5p-1, -0x1.402e7e06b3e19p-1,                    \
      -0x1.3fccfaefbe3c0p-1, -0x1.3f6b8370fe24ap-1, -0x1.3f0a17842ab30p-1, -0x1.3ea8b722fee82p-1,                    \
      -0x1.3e47624739ab0p-1, -0x1.3de618ea9dc4cp-1, -0x1.3d84db06f1dd8p-1, -0x1.3d23a89600781p-1,                    \
      -0x1.3cc2819197eedp-1, -0x1.3c6165f38a707p-1, -0x1.3c0055b5adfb7p-1, -0x1.3b9f50d1dc5c1p-1,                    \
      -0x1.3b3e5741f326cp-1, -0x1.3add68ffd3b6ep-1, -0x1.3a7c860563299p-1, -0x1.3a1bae4c8a5adp-1,                    \
      -0x1.39bae1cf35e2dp-1, -0x1.395a208756109p-1, -0x1.38f96a6edee8cp-1, -0x1.3898bf7fc820bp-1,                    \
      -0x1.38381fb40d1b8p-1, -0x1.37d78b05ace6fp-1, -0x1.3777016eaa375p-1, -0x1.371682e90b656p-1,                    \
      -0x1.36b60f6eda699p-1, -0x1.3655a6fa24d9ep-1, -0x1.35f54984fbe57p-1, -0x1.3594f70974527p-1,                    \
      -0x1.3534af81a6799p-1, -0x1.34d472e7ae43fp-1, -0x1.34744135ab273p-1, -0x1.34141a65c0222p-1,                    \
      -0x1.33b3fe7213ba4p-1, -0x1.3353ed54cff76p-1, -0x1.32f3e70822617p-1, -0x1.3293eb863bfd2p-1,                    \
      -0x1.3233fac951483p-1, -0x1.31d414cb9a36fp-1, -0x1.317439875230bp-1, -0x1.311468f6b80cfp-1,                    \
      -0x1.30b4a3140e0fdp-1, -0x1.3054e7d999e76p-1, -0x1.2ff53741a4a87p-1, -0x1.2f9591467acb5p-1,                    \
      -0x1.2f35f5e26c290p-1, -0x1.2ed6650fcbf7fp-1, -0x1.2e76dec8f0c94p-1, -0x1.2e17630834854p-1,                    \
      -0x1.2db7f1c7f468fp-1, -0x1.2d588b0291026p-1, -0x1.2cf92eb26e2edp-1, -0x1.2c99dcd1f3164p-1,                    \
      -0x1.2c3a955b8a29ap-1, -0x1.2bdb5849a11f7p-1, -0x1.2b7c2596a8f11p-1, -0x1.2b1cfd3d15d70p-1,                    \
      -0x1.2abddf375f472p-1, -0x1.2a5ecb7ffff0ep-1, -0x1.29ffc21175bb4p-1, -0x1.29a0c2e641c0fp-1,                    \
      -0x1.2941cdf8e84e1p-1, -0x1.28e2e343f0dd6p-1, -0x1.288402c1e614fp-1, -0x1.28252c6d55c3fp-1,                    \
      -0x1.27c66040d0df6p-1, -0x1.27679e36eb7f8p-1, -0x1.2708e64a3cdcfp-1, -0x1.26aa38755f4dbp-1,                    \
      -0x1.264b94b2f0432p-1, -0x1.25ecfafd90463p-1, -0x1.258e6b4fe2f59p-1, -0x1.252fe5a48f023p-1,                    \
      -0x1.24d169f63e2d1p-1, -0x1.2472f83f9d448p-1, -0x1.2414907b5c210p-1, -0x1.23b632a42da33p-1,                    \
      -0x1.2357deb4c7b08p-1, -0x1.22f994a7e330bp-1, -0x1.229b54783c0c3p-1, -0x1.223d1e2091273p-1,                    \
      -0x1.21def19ba461cp-1, -0x1.2180cee43a92ap-1, -0x1.2122b5f51b872p-1, -0x1.20c4a6c911fe0p-1,                    \
      -0x1.2066a15aeba6dp-1, -0x1.2008a5a5791e5p-1, -0x1.1faab3a38dec7p-1, -0x1.1f4ccb5000815p-1,                    \
      -0x1.1eeeeca5aa330p-1, -0x1.1e91179f673acp-1, -0x1.1e334c3816b28p-1, -0x1.1dd58a6a9a92ep-1,                    \
      -0x1.1d77d231d7af7p-1, -0x1.1d1a2388b5b5ep-1, -0x1.1cbc7e6a1f29cp-1, -0x1.1c5ee2d10163dp-1,                    \
      -0x1.1c0150b84c8dcp-1, -0x1.1ba3c81af3a11p-1, -0x1.1b4648f3ec643p-1, -0x1.1ae8d33e2f67fp-1,                    \
      -0x1.1a8b66f4b804ep-1, -0x1.1a2e04128459ap-1, -0x1.19d0aa929547ap-1, -0x1.19735a6fee716p-1,                    \
      -0x1.191613a59637dp-1, -0x1.18b8d62e95b7ap-1, -0x1.185ba205f8c77p-1, -0x1.17fe7726cdf54p-1,                    \
      -0x1.17a1558c26838p-1, -0x1.17443d311667dp-1, -0x1.16e72e10b447ep-1, -0x1.168a282619773p-1,                    \
      -0x1.162d2b6c61f51p-1, -0x1.15d037deac6a6p-1, -0x1.15734d781a266p-1, -0x1.15166c33cf1dcp-1,                    \
      -0x1.14b9940cf1e74p-1, -0x1.145cc4feabb9fp-1, -0x1.13ffff04286afp-1, -0x1.13a34218966b1p-1,                    \
      -0x1.13468e3726c42p-1, -0x1.12e9e35b0d17ep-1, -0x1.128d417f7f9c9p-1, -0x1.1230a89fb71b9p-1,                    \
      -0x1.11d418b6eeee6p-1, -0x1.117791c064fd3p-1, -0x1.111b13b759bc9p-1, -0x1.10be9e97102abp-1,                    \
      -0x1.1062325acdcdap-1, -0x1.1005cefddab13p-1, -0x1.0fa9747b8164fp-1, -0x1.0f4d22cf0ef97p-1,                    \
      -0x1.0ef0d9f3d2febp-1, -0x1.0e9499e51f81cp-1, -0x1.0e38629e490aap-1, -0x1.0ddc341aa69a3p-1,                    \
      -0x1.0d800e5591a80p-1, -0x1.0d23f14a6620bp-1, -0x1.0cc7dcf48262cp-1, -0x1.0c6bd14f473dcp-1,                    \
      -0x1.0c0fce5617ef7p-1, -0x1.0bb3d4045a21fp-1, -0x1.0b57e25575e9cp-1, -0x1.0afbf944d5c39p-1,                    \
      -0x1.0aa018cde6921p-1, -0x1.0a4440ec179cap-1, -0x1.09e8719ada8c3p-1, -0x1.098caad5a36a1p-1,                    \
      -0x1.0930ec97e89dep-1, -0x1.08d536dd22eb2p-1, -0x1.087989a0cd6fap-1, -0x1.081de4de65a0fp-1,                    \
      -0x1.07c248916b4b3p-1, -0x1.0766b4b5608e9p-1, -0x1.070b2945c9dd7p-1, -0x1.06afa63e2dfa6p-1,                    \
      -0x1.06542b9a15f67p-1, -0x1.05f8b9550d2edp-1, -0x1.059d4f6aa14b8p-1, -0x1.0541edd6623c9p-1,                    \
      -0x1.04e69493e238ep-1, -0x1.048b439eb5bc2p-1, -0x1.042ffaf273849p-1, -0x1.03d4ba8ab4916p-1,                    \
      -0x1.037982631420bp-1, -0x1.031e52772fadcp-1, -0x1.02c32ac2a6ef3p-1, -0x1.02680b411bd4dp-1,                    \
      -0x1.020cf3ee3285ep-1, -0x1.01b1e4c5915f8p-1, -0x1.0156ddc2e0f26p-1, -0x1.00fbdee1cc012p-1,                    \
      -0x1.00a0e81dff7ebp-1, -0x1.0045f9732a8c4p-1, -0x1.ffd625b9fcee6p-2, -0x1.ff2068ae5d6fbp-2,                    \
      -0x1.fe6abbbae1de7p-2, -0x1.fdb51ed6f9cafp-2, -0x1.fcff91fa190fdp-2, -0x1.fc4a151bb7ce7p-2,                    \
      -0x1.fb94a833526c5p-2, -0x1.fadf4b38698dfp-2, -0x1.fa29fe2282144p-2, -0x1.f974c0e925195p-2,                    \
      -0x1.f8bf9383dfec0p-2, -0x1.f80a75ea440d0p-2, -0x1.f7556813e72bfp-2, -0x1.f6a069f863227p-2,                    \
      -0x1.f5eb7b8f55f16p-2, -0x1.f5369cd061be0p-2, -0x1.f481cdb32cce6p-2, -0x1.f3cd0e2f6184bp-2,                    \
      -0x1.f3185e3cae5d8p-2, -0x1.f263bdd2c5eb6p-2, -0x1.f1af2ce95ed34p-2, -0x1.f0faab7833ca8p-2,                    \
      -0x1.f046397703921p-2, -0x1.ef91d6dd90f40p-2, -0x1.eedd83a3a2bf6p-2, -0x1.ee293fc103c5ap-2,                    \
      -0x1.ed750b2d82d76p-2, -0x1.ecc0e5e0f2c02p-2, -0x1.ec0ccfd32a445p-2, -0x1.eb58c8fc041d3p-2,                    \
      -0x1.eaa4d1535ef56p-2, -0x1.e9f0e8d11d664p-2, -0x1.e93d0f6d25f46p-2, -0x1.e889451f630cdp-2,                    \
      -0x1.e7d589dfc3004p-2, -0x1.e721dda638029p-2, -0x1.e66e406ab824dp-2, -0x1.e5bab2253d53ep-2,                    \
      -0x1.e50732cdc5548p-2, -0x1.e453c25c51c0bp-2, -0x1.e3a060c8e803cp-2, -0x1.e2ed0e0b9157bp-2,                    \
      -0x1.e239ca1c5ac2dp-2, -0x1.e18694f35512dp-2, -0x1.e0d36e8894db9p-2, -0x1.e02056d432727p-2,                    \
      -0x1.df6d4dce49ec7p-2, -0x1.deba536efb1aap-2, -0x1.de0767ae69872p-2, -0x1.dd548a84bc71bp-2,                    \
      -0x1.dca1bbea1ecd9p-2, -0x1.dbeefbd6bf3dap-2, -0x1.db3c4a42d011cp-2, -0x1.da89a7268743bp-2,                    \
      -0x1.d9d7127a1e748p-2, -0x1.d9248c35d2e89p-2, -0x1.d8721451e585cp-2, -0x1.d7bfaac69ad03p-2,                    \
      -0x1.d70d4f8c3ae64p-2, -0x1.d65b029b117f5p-2, -0x1.d5a8c3eb6de74p-2, -0x1.d4f69375a2fd2p-2,                    \
      -0x1.d4447132072f0p-2, -0x1.d3925d18f4771p-2, -0x1.d2e05722c8599p-2, -0x1.d22e5f47e3e17p-2,                    \
      -0x1.d17c7580ab9d9p-2, -0x1.d0ca99c5879dbp-2, -0x1.d018cc0ee3700p-2, -0x1.cf670c552e1dbp-2,                    \
      -0x1.ceb55a90da28fp-2, -0x1.ce03b6ba5d890p-2, -0x1.cd5220ca31a8ep-2, -0x1.cca098b8d3630p-2,                    \
      -0x1.cbef1e7ec2ff6p-2, -0x1.cb3db21484307p-2, -0x1.ca8c53729e111p-2, -0x1.c9db02919b201p-2,                    \
      -0x1.c929bf6a093f7p-2, -0x1.c87889f479b03p-2, -0x1.c7c7622981108p-2, -0x1.c7164801b7586p-2,                    \
      -0x1.c6653b75b7d78p-2, -0x1.c5b43c7e2131dp-2, -0x1.c5034b13955e0p-2, -0x1.c452672eb9a15p-2,                    \
      -0x1.c3a190c8368e0p-2, -0x1.c2f0c7d8b8000p-2, -0x1.c2400c58ed1b0p-2, -0x1.c18f5e4188473p-2,                    \
      -0x1.c0debd8b3f2efp-2, -0x1.c02e2a2ecabbcp-2, -0x1.bf7da424e7140p-2, -0x1.becd2b6653986p-2,                    \
      -0x1.be1cbfebd2e17p-2, -0x1.bd6c61ae2abc1p-2, -0x1.bcbc10a624285p-2, -0x1.bc0bcccc8b555p-2,                    \
      -0x1.bb5b961a2fa07p-2, -0x1.baab6c87e390cp-2, -0x1.b9fb500e7cd66p-2, -0x1.b94b40a6d446bp-2,                    \
      -0x1.b89b3e49c5d9ep-2, -0x1.b7eb48f030a94p-2, -0x1.b73b6092f6ec2p-2, -0x1.b68b852afdf52p-2,                    \
      -0x1.b5dbb6b12e302p-2, -0x1.b52bf51e731fcp-2, -0x1.b47c406bbb5a9p-2, -0x1.b3cc9891f888ap-2,                    \
      -0x1.b31cfd8a1f618p-2, -0x1.b26d6f4d27a91p-2, -0x1.b1bdedd40c2e0p-2, -0x1.b10e7917cac69p-2,                    \
      -0x1.b05f1111644e8p-2, -0x1.afafb5b9dca46p-2, -0x1.af00670a3aa77p-2, -0x1.ae5124fb88354p-2,                    \
      -0x1.ada1ef86d2270p-2, -0x1.acf2c6a5284f4p-2, -0x1.ac43aa4f9d77dp-2, -0x1.ab949a7f475eep-2,                    \
      -0x1.aae5972d3eb50p-2, -0x1.aa36a0529f1a9p-2, -0x1.a987b5e8871dcp-2, -0x1.a8d8d7e81837bp-2,                    \
      -0x1.a82a064a76ca9p-2, -0x1.a77b4108ca1f2p-2, -0x1.a6cc881c3c626p-2, -0x1.a61ddb7dfaa30p-2,                    \
      -0x1.a56f3b2734cfcp-2, -0x1.a4c0a7111db42p-2, -0x1.a4121f34eaf79p-2, -0x1.a363a38bd5197p-2,                    \
      -0x1.a2b5340f176fbp-2, -0x1.a206d0b7f024fp-2, -0x1.a158797fa0358p-2, -0x1.a0aa2e5f6b6d7p-2,                    \
      -0x1.9ffbef5098661p-2, -0x1.9f4dbc4c7084ap-2, -0x1.9e9f954c3ff67p-2, -0x1.9df17a4955b03p-2,                    \
      -0x1.9d436b3d036b1p-2, -0x1.9c9568209da24p-2, -0x1.9be770ed7b91ep-2, -0x1.9b39859cf7336p-2,                    \
      -0x1.9a8ba6286d3bdp-2, -0x1.99ddd2893d1a9p-2, -0x1.99300ab8c8f5dp-2, -0x1.98824eb075a99p-2,                    \
      -0x1.97d49e69aac44p-2, -0x1.9726f9ddd285dp-2, -0x1.9679610659dccp-2, -0x1.95cbd3dcb0645p-2,                    \
      -0x1.951e525a48627p-2, -0x1.9470dc7896c4ep-2, -0x1.93c3723113209p-2, -0x1.9316137d37ae4p-2,                    \
      -0x1.9268c05681485p-2, -0x1.91bb78b66f69dp-2, -0x1.910e3c96842b6p-2, -0x1.90610bf044417p-2,                    \
      -0x1.8fb3e6bd36fabp-2, -0x1.8f06ccf6e63c3p-2, -0x1.8e59be96de821p-2, -0x1.8dacbb96aedb7p-2,                    \
      -0x1.8cffc3efe8e8ap-2, -0x1.8c52d79c20d9fp-2, -0x1.8ba5f694ed6cap-2, -0x1.8af920d3e7e99p-2,                    \
      -0x1.8a4c5652ac230p-2, -0x1.899f970ad8729p-2, -0x1.88f2e2f60db73p-2, -0x1.88463a0def52fp-2,                    \
      -0x1.87999c4c23298p-2, -0x1.86ed09aa519dcp-2, -0x1.8640822225901p-2, -0x1.859405ad4c5bdp-2,                    \
      -0x1.84e7944575d65p-2, -0x1.843b2de4544bdp-2, -0x1.838ed2839c7e2p-2, -0x1.82e2821d05a2fp-2,                    \
      -0x1.82363caa49613p-2, -0x1.818a022523cf5p-2, -0x1.80ddd2875371bp-2, -0x1.8031adca99386p-2,                    \
      -0x1.7f8593e8b87cfp-2, -0x1.7ed984db7701bp-2, -0x1.7e2d809c9cedfp-2, -0x1.7d818725f4cdap-2,                    \
      -0x1.7cd598714b8e9p-2, -0x1.7c29b478707f4p-2, -0x1.7b7ddb35354c4p-2, -0x1.7ad20ca16dfeep-2,                    \
      -0x1.7a2648b6f0fa9p-2, -0x1.797a8f6f96fc4p-2, -0x1.78cee0c53b174p-2, -0x1.78233cb1bab3ap-2,                    \
      -0x1.7777a32ef58dbp-2, -0x1.76cc1436cdb20p-2, -0x1.76208fc3277cfp-2, -0x1.757515cde998cp-2,                    \
      -0x1.74c9a650fcfb1p-2, -0x1.741e41464ce41p-2, -0x1.7372e6a7c6db5p-2, -0x1.72c7966f5aaf6p-2,                    \
      -0x1.721c5096fa730p-2, -0x1.717115189a7c0p-2, -0x1.70c5e3ee31607p-2, -0x1.701abd11b7f64p-2,                    \
      -0x1.6f6fa07d29501p-2, -0x1.6ec48e2a82bcap-2, -0x1.6e198613c3c42p-2, -0x1.6d6e8832ee26dp-2,                    \
      -0x1.6cc3948205db0p-2, -0x1.6c18aafb110c0p-2, -0x1.6b6dcb9818171p-2, -0x1.6ac2f653258acp-2,                    \
      -0x1.6a182b2646258p-2, -0x1.696d6a0b88d21p-2, -0x1.68c2b2fcfea75p-2, -0x1.681805f4bae6bp-2,                    \
      -0x1.676d62ecd2f94p-2, -0x1.66c2c9df5e6efp-2, -0x1.66183ac676fc2p-2, -0x1.656db59c38793p-2,                    \
      -0x1.64c33a5ac0debp-2, -0x1.6418c8fc30460p-2, -0x1.636e617aa8e5dp-2, -0x1.62c403d04f11ap-2,                    \
      -0x1.6219aff749371p-2, -0x1.616f65e9bfdd5p-2, -0x1.60c525a1dda28p-2, -0x1.601aef19cf3a2p-2,                    \
      -0x1.5f70c24bc36c4p-2, -0x1.5ec69f31eb12ep-2, -0x1.5e1c85c679183p-2, -0x1.5d727603a2767p-2,                    \
      -0x1.5cc86fe39e344p-2, -0x1.5c1e7360a5646p-2, -0x1.5b748074f3238p-2, -0x1.5aca971ac496ap-2,                    \
      -0x1.5a20b74c58e9dp-2, -0x1.5976e103f14e2p-2, -0x1.58cd143bd0f83p-2, -0x1.582350ee3d1eap-2,                    \
      -0x1.577997157cf83p-2, -0x1.56cfe6abd9ba8p-2, -0x1.56263fab9e98ap-2, -0x1.557ca20f18c07p-2,                    \
      -0x1.54d30dd0975a4p-2, -0x1.542982ea6b86dp-2, -0x1.53800156e85d1p-2, -0x1.52d6891062e9fp-2,                    \
      -0x1.522d1a11322d6p-2, -0x1.5183b453af198p-2, -0x1.50da57d23490ep-2, -0x1.503104871f657p-2,                    \
      -0x1.4f87ba6cce55fp-2, -0x1.4ede797da20d1p-2, -0x1.4e3541b3fd200p-2, -0x1.4d8c130a440c8p-2,                    \
      -0x1.4ce2ed7add37cp-2, -0x1.4c39d10030ec1p-2, -0x1.4b90bd94a9589p-2, -0x1.4ae7b332b28e6p-2,                    \
      -0x1.4a3eb1d4ba800p-2, -0x1.4995b97530ff9p-2, -0x1.48ecca0e87bd5p-2, -0x1.4843e39b3245dp-2,                    \
      -0x1.479b0615a600bp-2, -0x1.46f231785a2f3p-2, -0x1.464965bdc7eafp-2, -0x1.45a0a2e06a23ap-2,                    \
      -0x1.44f7e8dabd9e4p-2, -0x1.444f37a740f36p-2, -0x1.43a68f40748dbp-2, -0x1.42fdefa0daa8bp-2,                    \
      -0x1.425558c2f74eap-2, -0x1.41accaa150580p-2, -0x1.410445366d690p-2, -0x1.405bc87cd7f11p-2,                    \
      -0x1.3fb3546f1b28fp-2, -0x1.3f0ae907c410bp-2, -0x1.3e628641616f9p-2, -0x1.3dba2c1683d15p-2,                    \
      -0x1.3d11da81bd857p-2, -0x1.3c69917da29d8p-2, -0x1.3bc15104c8ebep-2, -0x1.3b191911c8021p-2,                    \
      -0x1.3a70e99f392f9p-2, -0x1.39c8c2a7b77ffp-2, -0x1.3920a425dfba4p-2, -0x1.38788e14505ecp-2,                    \
      -0x1.37d0806da9a65p-2, -0x1.37287b2c8d802p-2, -0x1.36807e4b9f910p-2, -0x1.35d889c585320p-2,                    \
      -0x1.35309d94e56e2p-2, -0x1.3488b9b469022p-2, -0x1.33e0de1eba5a6p-2, -0x1.33390ace85921p-2,                    \
      -0x1.32913fbe7870bp-2, -0x1.31e97ce9426a5p-2, -0x1.3141c249949cbp-2, -0x1.309a0fda21ce8p-2,                    \
      -0x1.2ff265959e6eap-2, -0x1.2f4ac376c091ep-2, -0x1.2ea329783ff1ap-2, -0x1.2dfb9794d5eb3p-2,                    \
      -0x1.2d540dc73d7dep-2, -0x1.2cac8c0a3349dp-2, -0x1.2c051258758eep-2, -0x1.2b5da0acc42a9p-2,                    \
      -0x1.2ab63701e097fp-2, -0x1.2a0ed5528decep-2, -0x1.29677b9990d9dp-2, -0x1.28c029d1afa7ep-2,                    \
      -0x1.2818dff5b237cp-2, -0x1.27719e0062005p-2, -0x1.26ca63ec8a0d5p-2, -0x1.262331b4f6fe2p-2,                    \
      -0x1.257c075477046p-2, -0x1.24d4e4c5d9e2ap-2, -0x1.242dca03f0eb6p-2, -0x1.2386b7098efefp-2,                    \
      -0x1.22dfabd1888b3p-2, -0x1.2238a856b389ap-2, -0x1.2191ac93e77e4p-2, -0x1.20eab883fd764p-2,                    \
      -0x1.2043cc21d006fp-2, -0x1.1f9ce7683b4c0p-2, -0x1.1ef60a521ce6cp-2, -0x1.1e4f34da53fc8p-2,                    \
      -0x1.1da866fbc1358p-2, -0x1.1d01a0b146bb8p-2, -0x1.1c5ae1f5c8389p-2, -0x1.1bb42ac42ad60p-2,                    \
      -0x1.1b0d7b17553aap-2, -0x1.1a66d2ea2f8a1p-2, -0x1.19c03237a3636p-2, -0x1.191998fa9bdf7p-2,                    \
      -0x1.1873072e058fep-2, -0x1.17cc7cccce7e4p-2, -0x1.1725f9d1e62a3p-2, -0x1.167f7e383d888p-2,                    \
      -0x1.15d909fac7023p-2, -0x1.15329d1476725p-2, -0x1.148c378041261p-2, -0x1.13e5d9391dda6p-2,                    \
      -0x1.133f823a04bb6p-2, -0x1.1299327def630p-2, -0x1.11f2e9ffd8d79p-2, -0x1.114ca8babd8b3p-2,                    \
      -0x1.10a66ea99b599p-2, -0x1.10003bc771880p-2, -0x1.0f5a100f40c2fp-2, -0x1.0eb3eb7c0b1dep-2,                    \
      -0x1.0e0dce08d411bp-2, -0x1.0d67b7b0a07afp-2, -0x1.0cc1a86e7699ap-2, -0x1.0c1ba03d5e0fap-2,                    \
      -0x1.0b759f185fdf0p-2, -0x1.0acfa4fa86699p-2, -0x1.0a29b1dedd6fcp-2, -0x1.0983c5c0720e4p-2,                    \
      -0x1.08dde09a52be7p-2, -0x1.083802678f543p-2, -0x1.07922b2338fcep-2, -0x1.06ec5ac8623e8p-2,                    \
      -0x1.064691521ef63p-2, -0x1.05a0cebb84575p-2, -0x1.04fb12ffa8ea2p-2, -0x1.04555e19a48abp-2,                    \
      -0x1.03afb0049067ep-2, -0x1.030a08bb87020p-2, -0x1.02646839a4299p-2, -0x1.01bece7a04feap-2,                    \
      -0x1.01193b77c7ef4p-2, -0x1.0073af2e0cb66p-2, -0x1.ff9c532fe8b5dp-3, -0x1.fe515561425cbp-3,                    \
      -0x1.fd0664e66d979p-3, -0x1.fbbb81b5b42dbp-3, -0x1.fa70abc56274fp-3, -0x1.f925e30bc74f4p-3,                    \
      -0x1.f7db277f3429bp-3, -0x1.f6907915fcf84p-3, -0x1.f545d7c678357p-3, -0x1.f3fb4386fede7p-3,                    \
      -0x1.f2b0bc4dec733p-3, -0x1.f16642119ef11p-3, -0x1.f01bd4c876d37p-3, -0x1.eed17468d7103p-3,                    \
      -0x1.ed8720e925156p-3, -0x1.ec3cda3fc8c80p-3, -0x1.eaf2a0632c80bp-3, -0x1.e9a87349bd0a5p-3,                    \
      -0x1.e85e52e9e99f3p-3, -0x1.e7143f3a23e7cp-3, -0x1.e5ca3830dff80p-3, -0x1.e4803dc4944c6p-3,                    \
      -0x1.e3364febb9c9cp-3, -0x1.e1ec6e9ccbb8dp-3, -0x1.e0a299ce47c5bp-3, -0x1.df58d176adfd5p-3,                    \
      -0x1.de0f158c80cb6p-3, -0x1.dcc5660644f7ap-3, -0x1.db7bc2da81a3fp-3, -0x1.da322bffc04b9p-3,                    \
      -0x1.d8e8a16c8cbe9p-3, -0x1.d79f23177521cp-3, -0x1.d655b0f709ebcp-3, -0x1.d50c4b01dde2cp-3,                    \
      -0x1.d3c2f12e861b0p-3, -0x1.d279a37399f3ep-3, -0x1.d13061c7b316dp-3, -0x1.cfe72c216d74ap-3,                    \
      -0x1.ce9e027767434p-3, -0x1.cd54e4c040fb9p-3, -0x1.cc0bd2f29d58cp-3, -0x1.cac2cd0521548p-3,                    \
      -0x1.c979d2ee74254p-3, -0x1.c830e4a53f3d0p-3, -0x1.c6e802202e472p-3, -0x1.c59f2b55ef251p-3,                    \
      -0x1.c456603d31ed7p-3, -0x1.c30da0cca8ea6p-3, -0x1.c1c4ecfb08962p-3, -0x1.c07c44bf0799dp-3,                    \
      -0x1.bf33a80f5ecbep-3, -0x1.bdeb16e2c92d1p-3, -0x1.bca2913003e70p-3, -0x1.bb5a16edce4a5p-3,                    \
      -0x1.ba11a812e9cbdp-3, -0x1.b8c944961a034p-3, -0x1.b780ec6e24a99p-3, -0x1.b6389f91d195cp-3,                    \
      -0x1.b4f05df7eabc4p-3, -0x1.b3a827973c2bap-3, -0x1.b25ffc66940bap-3, -0x1.b117dc5cc29aap-3,                    \
      -0x1.afcfc7709a2bdp-3, -0x1.ae87bd98ef257p-3, -0x1.ad3fbecc97fe9p-3, -0x1.abf7cb026d3d1p-3,                    \
      -0x1.aaafe23149739p-3, -0x1.a968045009407p-3, -0x1.a82031558b4a6p-3, -0x1.a6d86938b03f9p-3,                    \
      -0x1.a590abf05ad35p-3, -0x1.a448f9736fbc8p-3, -0x1.a30151b8d5b28p-3, -0x1.a1b9b4b7756cdp-3,                    \
      -0x1.a0722266399ffp-3, -0x1.9f2a9abc0efc7p-3, -0x1.9de31dafe42bdp-3, -0x1.9c9bab38a9cfcp-3,                    \
      -0x1.9b54434d527f8p-3, -0x1.9a0ce5e4d2c65p-3, -0x1.98c592f621214p-3, -0x1.977e4a7835fdcp-3,                    \
      -0x1.96370c620bb70p-3, -0x1.94efd8aa9e94fp-3, -0x1.93a8af48ecc97p-3, -0x1.92619033f66f5p-3,                    \
      -0x1.911a7b62bd87bp-3, -0x1.8fd370cc45f8fp-3, -0x1.8e8c7067958b4p-3, -0x1.8d457a2bb3e93p-3,                    \
      -0x1.8bfe8e0faa9bap-3, -0x1.8ab7ac0a8508ap-3, -0x1.8970d41350724p-3, -0x1.882a06211bf3bp-3,                    \
      -0x1.86e3422af8800p-3, -0x1.859c8827f8e04p-3, -0x1.8455d80f31b11p-3, -0x1.830f31d7b961bp-3,                    \
      -0x1.81c89578a831cp-3, -0x1.808202e9182eep-3, -0x1.7f3b7a202533fp-3, -0x1.7df4fb14ece64p-3,                    \
      -0x1.7cae85be8eb48p-3, -0x1.7b681a142bd43p-3, -0x1.7a21b80ce7407p-3, -0x1.78db5f9fe5b80p-3,                    \
      -0x1.779510c44dbb4p-3, -0x1.764ecb71478a7p-3, -0x1.75088f9dfd245p-3, -0x1.73c25d419a437p-3,                    \
      -0x1.727c34534c5d5p-3, -0x1.713614ca42a05p-3, -0x1.6feffe9dadf15p-3, -0x1.6ea9f1c4c0eacp-3,                    \
      -0x1.6d63ee36afda5p-3, -0x1.6c1df3eab0bf2p-3, -0x1.6ad802d7fb487p-3, -0x1.69921af5c8d38p-3,                    \
      -0x1.684c3c3b5469cp-3, -0x1.6706669fdabf1p-3, -0x1.65c09a1a9a304p-3, -0x1.647ad6a2d2c11p-3,                    \
      -0x1.63351c2fc61a7p-3, -0x1.61ef6ab8b788fp-3, -0x1.60a9c234ebfa7p-3, -0x1.5f64229ba9fd3p-3,                    \
      -0x1.5e1e8be439bdbp-3, -0x1.5cd8fe05e5047p-3, -0x1.5b9378f7f7353p-3, -0x1.5a4dfcb1bd4c8p-3,                    \
      -0x1.5908892a85de3p-3, -0x1.57c31e59a113cp-3, -0x1.567dbc3660aa1p-3, -0x1.553862b817f09p-3,                    \
      -0x1.53f311d61bc6dp-3, -0x1.52adc987c29adp-3, -0x1.516889c464684p-3, -0x1.502352835ab52p-3,                    \
      -0x1.4ede23bc00914p-3, -0x1.4d98fd65b2948p-3, -0x1.4c53df77cedc7p-3, -0x1.4b0ec9e9b50b3p-3,                    \
      -0x1.49c9bcb2c6459p-3, -0x1.4884b7ca65313p-3, -0x1.473fbb27f5f37p-3, -0x1.45fac6c2de2e9p-3,                    \
      -0x1.44b5da9285015p-3, -0x1.4370f68e53046p-3, -0x1.422c1aadb2492p-3, -0x1.40e746e80e57bp-3,                    \
      -0x1.3fa27b34d42d6p-3, -0x1.3e5db78b723b2p-3, -0x1.3d18fbe358638p-3, -0x1.3bd44833f7f96p-3,                    \
      -0x1.3a8f9c74c3be1p-3, -0x1.394af89d2fdfcp-3, -0x1.38065ca4b1f7ap-3, -0x1.36c1c882c108dp-3,                    \
      -0x1.357d3c2ed57dap-3, -0x1.3438b7a069276p-3, -0x1.32f43acef73b4p-3, -0x1.31afc5b1fc517p-3,                    \
      -0x1.306b5840f663ep-3, -0x1.2f26f27364cbap-3, -0x1.2de29440c83fcp-3, -0x1.2c9e3da0a2d40p-3,                    \
      -0x1.2b59ee8a77f63p-3, -0x1.2a15a6f5cc6dfp-3, -0x1.28d166da2659cp-3, -0x1.278d2e2f0d2e1p-3,                    \
      -0x1.2648fcec09b3cp-3, -0x1.2504d308a605dp-3, -0x1.23c0b07c6d908p-3, -0x1.227c953eed0f4p-3,                    \
      -0x1.21388147b28b3p-3, -0x1.1ff4748e4d59ap-3, -0x1.1eb06f0a4e1a3p-3, -0x1.1d6c70b346b57p-3,                    \
      -0x1.1c287980ca5b3p-3, -0x1.1ae4896a6d80ep-3, -0x1.19a0a067c5e02p-3, -0x1.185cbe706a74dp-3,                    \
      -0x1.1718e37bf37bfp-3, -0x1.15d50f81fa712p-3, -0x1.1491427a1a0e7p-3, -0x1.134d7c5bee49bp-3,                    \
      -0x1.1209bd1f1452fp-3, -0x1.10c604bb2a937p-3, -0x1.0f825327d0abep-3, -0x1.0e3ea85ca7723p-3,                    \
      -0x1.0cfb045150f0ep-3, -0x1.0bb766fd7064ep-3, -0x1.0a73d058aa3bep-3, -0x1.0930405aa413bp-3,                    \
      -0x1.07ecb6fb04b71p-3, -0x1.06a93431741ddp-3, -0x1.0565b7f59b6a1p-3, -0x1.0422423f24e72p-3,                    \
      -0x1.02ded305bc07fp-3, -0x1.019b6a410d65ap-3, -0x1.005807e8c6bd9p-3, -0x1.fe2957e92de04p-4,                    \
      -0x1.fba2acb85bfe1p-4, -0x1.f91c0e2e7a17fp-4, -0x1.f6957c3aecad2p-4, -0x1.f40ef6cd1a76bp-4,                    \
      -0x1.f1887dd46c649p-4, -0x1.ef0211404d98ap-4, -0x1.ec7bb1002b664p-4, -0x1.e9f55d03754d3p-4,                    \
      -0x1.e76f15399cf74p-4, -0x1.e4e8d99216352p-4, -0x1.e262a9fc56fbap-4, -0x1.dfdc8667d7605p-4,                    \
      -0x1.dd566ec411963p-4, -0x1.dad0630081eb7p-4, -0x1.d84a630ca6c58p-4, -0x1.d5c46ed8009e9p-4,                    \
      -0x1.d33e865212022p-4, -0x1.d0b8a96a5f8a6p-4, -0x1.ce32d8106fdd3p-4, -0x1.cbad1233cba84p-4,                    \
      -0x1.c92757c3fd9f3p-4, -0x1.c6a1a8b092780p-4, -0x1.c41c04e918e79p-4, -0x1.c1966c5d219f9p-4,                    \
      -0x1.bf10defc3f4a6p-4, -0x1.bc8b5cb606897p-4, -0x1.ba05e57a0df14p-4, -0x1.b7807937ee060p-4,                    \
      -0x1.b4fb17df4139ep-4, -0x1.b275c15fa3e91p-4, -0x1.aff075a8b4570p-4, -0x1.ad6b34aa12ab8p-4,                    \
      -0x1.aae5fe5360efap-4, -0x1.a860d294430b0p-4, -0x1.a5dbb15c5ec01p-4, -0x1.a3569a9b5baa1p-4,                    \
      -0x1.a0d18e40e3395p-4, -0x1.9e4c8c3ca0b10p-4, -0x1.9bc7947e41234p-4, -0x1.9942a6f5736f2p-4,                    \
      -0x1.96bdc391e83c9p-4, -0x1.9438ea4351fadp-4, -0x1.91b41af964dc6p-4, -0x1.8f2f55a3d6d45p-4,                    \
      -0x1.8caa9a325f939p-4, -0x1.8a25e894b8858p-4, -0x1.87a140ba9ccdbp-4, -0x1.851ca293c944ap-4,                    \
      -0x1.82980e0ffc743p-4, -0x1.8013831ef695ep-4, -0x1.7d8f01b0798f1p-4, -0x1.7b0a89b448eddp-4,                    \
      -0x1.78861b1a29e72p-4, -0x1.7601b5d1e352bp-4, -0x1.737d59cb3da91p-4, -0x1.70f906f602ffep-4,                    \
      -0x1.6e74bd41ff07ap-4, -0x1.6bf07c9eff085p-4, -0x1.696c44fcd1de6p-4, -0x1.66e8164b47f87p-4,                    \
      -0x1.6463f07a33541p-4, -0x1.61dfd379677a7p-4, -0x1.5f5bbf38b97e9p-4, -0x1.5cd7b3a7fff8fp-4,                    \
      -0x1.5a53b0b71305ap-4, -0x1.57cfb655cc416p-4, -0x1.554bc47406c68p-4, -0x1.52c7db019f29ap-4,                    \
      -0x1.5043f9ee73777p-4, -0x1.4dc0212a6331bp-4, -0x1.4b3c50a54f4bbp-4, -0x1.48b8884f1a286p-4,                    \
      -0x1.4634c817a796dp-4, -0x1.43b10feedccf8p-4, -0x1.412d5fc4a071ap-4, -0x1.3ea9b788da7fep-4,                    \
      -0x1.3c26172b745e1p-4, -0x1.39a27e9c58cdcp-4, -0x1.371eedcb73eb9p-4, -0x1.349b64a8b32cbp-4,                    \
      -0x1.3217e324055bbp-4, -0x1.2f94692d5a957p-4, -0x1.2d10f6b4a4470p-4, -0x1.2a8d8ba9d529bp-4,                    \
      -0x1.280a27fce1418p-4, -0x1.2586cb9dbdd96p-4, -0x1.2303767c61809p-4, -0x1.20802888c4081p-4,                    \
      -0x1.1dfce1b2de7f2p-4, -0x1.1b79a1eaab318p-4, -0x1.18f6692025a3cp-4, -0x1.167337434a904p-4,                    \
      -0x1.13f00c4417e55p-4, -0x1.116ce8128cc1ap-4, -0x1.0ee9ca9ea9719p-4, -0x1.0c66b3d86f6ccp-4,                    \
      -0x1.09e3a3afe1525p-4, -0x1.07609a1502e77p-4, -0x1.04dd96f7d9132p-4, -0x1.025a9a4869dccp-4,                    \
      -0x1.ffaf47ed78cfcp-5, -0x1.faa967e5b1e51p-5, -0x1.f5a3945991a49p-5, -0x1.f09dcd292ce0cp-5,                    \
      -0x1.eb9812349a90fp-5, -0x1.e692635bf3c99p-5, -0x1.e18cc07f53b75p-5, -0x1.dc87297ed7997p-5,                    \
      -0x1.d7819e3a9ebc1p-5, -0x1.d27c1e92ca72dp-5, -0x1.cd76aa677e137p-5, -0x1.c8714198deef4p-5,                    \
      -0x1.c36be407144efp-5, -0x1.be669192476bep-5, -0x1.b9614a1aa36afp-5, -0x1.b45c0d8055578p-5,                    \
      -0x1.af56dba38c1ccp-5, -0x1.aa51b46478812p-5, -0x1.a54c97a34d207p-5, -0x1.a04785403e660p-5,                    \
      -0x1.9b427d1b82878p-5, -0x1.963d7f15517f9p-5, -0x1.91388b0de5072p-5, -0x1.8c33a0e578922p-5,                    \
      -0x1.872ec07c49474p-5, -0x1.8229e9b295fccp-5, -0x1.7d251c689f310p-5, -0x1.7820587ea706dp-5,                    \
      -0x1.731b9dd4f13e4p-5, -0x1.6e16ec4bc3306p-5, -0x1.691243c363c90p-5, -0x1.640da41c1b810p-5,                    \
      -0x1.5f090d36345a1p-5, -0x1.5a047ef1f9d76p-5, -0x1.54fff92fb8fa0p-5, -0x1.4ffb7bcfc0399p-5,                    \
      -0x1.4af706b25f800p-5, -0x1.45f299b7e823fp-5, -0x1.40ee34c0ace27p-5, -0x1.3be9d7ad01da4p-5,                    \
      -0x1.36e5825d3c863p-5, -0x1.31e134b1b3b7ap-5, -0x1.2cdcee8abf905p-5, -0x1.27d8afc8b97e5p-5,                    \
      -0x1.22d4784bfc355p-5, -0x1.1dd047f4e3a98p-5, -0x1.18cc1ea3cd0a4p-5, -0x1.13c7fc3916bcap-5,                    \
      -0x1.0ec3e09520559p-5, -0x1.09bfcb984a951p-5, -0x1.04bbbd22f7601p-5, -0x1.ff6f6a2b13766p-6,                    \
      -0x1.f56766a0cb8afp-6, -0x1.eb5f6f67e1656p-6, -0x1.e1578441218c2p-6, -0x1.d74fa4ed5a997p-6,                    \
      -0x1.cd47d12d5d303p-6, -0x1.c34008c1fbf15p-6, -0x1.b9384b6c0b710p-6, -0x1.af3098ec622b1p-6,                    \
      -0x1.a528f103d879ap-6, -0x1.9b21537348885p-6, -0x1.9119bffb8e4aap-6, -0x1.8712365d87709p-6,                    \
      -0x1.7d0ab65a135bcp-6, -0x1.73033fb21314ep-6, -0x1.68fbd22669406p-6, -0x1.5ef46d77fa143p-6,                    \
      -0x1.54ed1167ab4bep-6, -0x1.4ae5bdb6641ecp-6, -0x1.40de72250d348p-6, -0x1.36d72e74909a7p-6,                    \
      -0x1.2ccff265d9b8ap-6, -0x1.22c8bdb9d5471p-6, -0x1.18c190317142bp-6, -0x1.0eba698d9ce2cp-6,                    \
      -0x1.04b3498f488dcp-6, -0x1.f5585feecb9d3p-7, -0x1.e14a390dce93dp-7, -0x1.cd3c1dfd81662p-7,                    \
      -0x1.b92e0e3fcd82fp-7, -0x1.a52009569e4aep-7, -0x1.91120ec3e0fb8p-7, -0x1.7d041e098498cp-7,                    \
      -0x1.68f636a979d7dp-7, -0x1.54e85825b309cp-7, -0x1.40da82002404dp-7, -0x1.2cccb3bac20f9p-7,                    \
      -0x1.18beecd783cb6p-7, -0x1.04b12cd8611dfp-7, -0x1.e146e67ea638ap-8, -0x1.b92b7f1ca7ea0p-8,                    \
      -0x1.9110228ebdb46p-8, -0x1.68f4cfd8dfd8ep-8, -0x1.40d985ff08494p-8, -0x1.18be4405327cep-8,                    \
      -0x1.e14611deb68b7p-9, -0x1.910fa7830149ap-9, -0x1.40d946ff433dfp-9, -0x1.e145dcb6f8453p-10,                   \
      -0x1.40d9373f5a195p-10, -0x1.40d9334f60520p-11, 0x0.0p+0, 0x1.40d9334f60520p-11, 0x1.40d9373f5a195p-10,        \
      0x1.e145dcb6f8453p-10, 0x1.40d946ff433dfp-9, 0x1.910fa7830149ap-9, 0x1.e14611deb68b7p-9, 0x1.18be4405327cep-8, \
      0x1.40d985ff08494p-8, 0x1.68f4cfd8dfd8ep-8, 0x1.9110228ebdb46p-8, 0x1.b92b7f1ca7ea0p-8, 0x1.e146e67ea638ap-8,  \
      0x1.04b12cd8611dfp-7, 0x1.18beecd783cb6p-7, 0x1.2cccb3bac20f9p-7, 0x1.40da82002404dp-7, 0x1.54e85825b309cp-7,  \
      0x1.68f636a979d7dp-7, 0x1.7d041e098498cp-7, 0x1.91120ec3e0fb8p-7, 0x1.a52009569e4aep-7, 0x1.b92e0e3fcd82fp-7,  \
      0x1.cd3c1dfd81662p-7, 0x1.e14a390dce93dp-7, 0x1.f5585feecb9d3p-7, 0x1.04b3498f488dcp-6, 0x1.0eba698d9ce2cp-6,  \
      0x1.18c190317142bp-6, 0x1.22c8bdb9d5471p-6, 0x1.2ccff265d9b8ap-6, 0x1.36d72e74909a7p-6, 0x1.40de72250d348p-6,  \
      0x1.4ae5bdb6641ecp-6, 0x1.54ed1167ab4bep-6, 0x1.5ef46d77fa143p-6, 0x1.68fbd22669406p-6, 0x1.73033fb21314ep-6,  \
      0x1.7d0ab65a135bcp-6, 0x1.8712365d87709p-6, 0x1.9119bffb8e4aap-6, 0x1.9b21537348885p-6, 0x1.a528f103d879ap-6,  \
      0x1.af3098ec622b1p-6, 0x1.b9384b6c0b710p-6, 0x1.c34008c1fbf15p-6, 0x1.cd47d12d5d303p-6, 0x1.d74fa4ed5a997p-6,  \
      0x1.e1578441218c2p-6, 0x1.eb5f6f67e1656p-6, 0x1.f56766a0cb8afp-6, 0x1.ff6f6a2b13766p-6, 0x1.04bbbd22f7601p-5,  \
      0x1.09bfcb984a951p-5, 0x1.0ec3e09520559p-5, 0x1.13c7fc3916bcap-5, 0x1.18cc1ea3cd0a4p-5, 0x1.1dd047f4e3a98p-5,  \
      0x1.22d4784bfc355p-5, 0x1.27d8afc8b97e5p-5, 0x1.2cdcee8abf905p-5, 0x1.31e134b1b3b7ap-5, 0x1.36e5825d3c863p-5,  \
      0x1.3be9d7ad01da4p-5, 0x1.40ee34c0ace27p-5, 0x1.45f299b7e823fp-5, 0x1.4af706b25f800p-5, 0x1.4ffb7bcfc0399p-5,  \
      0x1.54fff92fb8fa0p-5, 0x1.5a047ef1f9d76p-5, 0x1.5f090d36345a1p-5, 0x1.640da41c1b810p-5, 0x1.691243c363c90p-5,  \
      0x1.6e16ec4bc3306p-5, 0x1.731b9dd4f13e4p-5, 0x1.7820587ea706dp-5, 0x1.7d251c689f310p-5, 0x1.8229e9b295fccp-5,  \
      0x1.872ec07c49474p-5, 0x1.8c33a0e578922p-5, 0x1.91388b0de5072p-5, 0x1.963d7f15517f9p-5, 0x1.9b427d1b82878p-5,  \
      0x1.a04785403e660p-5, 0x1.a54c97a34d207p-5, 0x1.aa51b46478812p-5, 0x1.af56dba38c1ccp-5, 0x1.b45c0d8055578p-5,  \
      0x1.b9614a1aa36afp-5, 0x1.be669192476bep-5, 0x1.c36be407144efp-5, 0x1.c8714198deef4p-5, 0x1.cd76aa677e137p-5,  \
      0x1.d27c1e92ca72dp-5, 0x1.d7819e3a9ebc1p-5, 0x1.dc87297ed7997p-5, 0x1.e18cc07f53b75p-5, 0x1.e692635bf3c99p-5,  \
      0x1.eb9812349a90fp-5, 0x1.f09dcd292ce0cp-5, 0x1.f5a3945991a49p-5, 0x1.faa967e5b1e51p-5, 0x1.ffaf47ed78cfcp-5,  \
      0x1.025a9a4869dccp-4, 0x1.04dd96f7d9132p-4, 0x1.07609a1502e77p-4, 0x1.09e3a3afe1525p-4, 0x1.0c66b3d86f6ccp-4,  \
      0x1.0ee9ca9ea9719p-4, 0x1.116ce8128cc1ap-4, 0x1.13f00c4417e55p-4, 0x1.167337434a904p-4, 0x1.18f6692025a3cp-4,  \
      0x1.1b79a1eaab318p-4, 0x1.1dfce1b2de7f2p-4, 0x1.20802888c4081p-4, 0x1.2303767c61809p-4, 0x1.2586cb9dbdd96p-4,  \
      0x1.280a27fce1418p-4, 0x1.2a8d8ba9d529bp-4, 0x1.2d10f6b4a4470p-4, 0x1.2f94692d5a957p-4, 0x1.3217e324055bbp-4,  \
      0x1.349b64a8b32cbp-4, 0x1.371eedcb73eb9p-4, 0x1.39a27e9c58cdcp-4, 0x1.3c26172b745e1p-4, 0x1.3ea9b788da7fep-4,  \
      0x1.412d5fc4a071ap-4, 0x1.43b10feedccf8p-4, 0x1.4634c817a796dp-4, 0x1.48b8884f1a286p-4, 0x1.4b3c50a54f4bbp-4,  \
      0x1.4dc0212a6331bp-4, 0x1.5043f9ee73777p-4, 0x1.52c7db019f29ap-4, 0x1.554bc47406c68p-4, 0x1.57cfb655cc416p-4,  \
      0x1.5a53b0b71305ap-4, 0x1.5cd7b3a7fff8fp-4, 0x1.5f5bbf38b97e9p-4, 0x1.61dfd379677a7p-4, 0x1.6463f07a33541p-4,  \
      0x1.66e8164b47f87p-4, 0x1.696c44fcd1de6p-4, 0x1.6bf07c9eff085p-4, 0x1.6e74bd41ff07ap-4, 0x1.70f906f602ffep-4,  \
      0x1.737d59cb3da91p-4, 0x1.7601b5d1e352bp-4, 0x1.78861b1a29e72p-4, 0x1.7b0a89b448eddp-4, 0x1.7d8f01b0798f1p-4,  \
      0x1.8013831ef695ep-4, 0x1.82980e0ffc743p-4, 0x1.851ca293c944ap-4, 0x1.87a140ba9ccdbp-4, 0x1.8a25e894b8858p-4,  \
      0x1.8caa9a325f939p-4, 0x1.8f2f55a3d6d45p-4, 0x1.91b41af964dc6p-4, 0x1.9438ea4351fadp-4, 0x1.96bdc391e83c9p-4,  \
      0x1.9942a6f5736f2p-4, 0x1.9bc7947e41234p-4, 0x1.9e4c8c3ca0b10p-4, 0x1.a0d18e40e3395p-4, 0x1.a3569a9b5baa1p-4,  \
      0x1.a5dbb15c5ec01p-4, 0x1.a860d294430b0p-4, 0x1.aae5fe5360efap-4, 0x1.ad6b34aa12ab8p-4, 0x1.aff075a8b4570p-4,  \
      0x1.b275c15fa3e91p-4, 0x1.b4fb17df4139ep-4, 0x1.b7807937ee060p-4, 0x1.ba05e57a0df14p-4, 0x1.bc8b5cb606897p-4,  \
      0x1.bf10defc3f4a6p-4, 0x1.c1966c5d219f9p-4, 0x1.c41c04e918e79p-4, 0x1.c6a1a8b092780p-4, 0x1.c92757c3fd9f3p-4,  \
      0x1.cbad1233cba84p-4, 0x1.ce32d8106fdd3p-4, 0x1.d0b8a96a5f8a6p-4, 0x1.d33e865212022p-4, 0x1.d5c46ed8009e9p-4,  \
      0x1.d84a630ca6c58p-4, 0x1.dad0630081eb7p-4, 0x1.dd566ec411963p-4, 0x1.dfdc8667d7605p-4, 0x1.e262a9fc56fbap-4,  \
      0x1.e4e8d99216352p-4, 0x1.e76f15399cf74p-4, 0x1.e9f55d03754d3p-4, 0x1.ec7bb1002b664p-4, 0x1.ef0211404d98ap-4,  \
      0x1.f1887dd46c649p-4, 0x1.f40ef6cd1a76bp-4, 0x1.f6957c3aecad2p-4, 0x1.f91c0e2e7a17fp-4, 0x1.fba2acb85bfe1p-4,  \
      0x1.fe2957e92de04p-4, 0x1.005807e8c6bd9p-3, 0x1.019b6a410d65ap-3, 0x1.02ded305bc07fp-3, 0x1.0422423f24e72p-3,  \
      0x1.0565b7f59b6a1p-3, 0x1.06a93431741ddp-3, 0x1.07ecb6fb04b71p-3, 0x1.0930405aa413bp-3, 0x1.0a73d058aa3bep-3,  \
      0x1.0bb766fd7064ep-3, 0x1.0cfb045150f0ep-3, 0x1.0e3ea85ca7723p-3, 0x1.0f825327d0abep-3, 0x1.10c604bb2a937p-3,  \
      0x1.1209bd1f1452fp-3, 0x1.134d7c5bee49bp-3, 0x1.1491427a1a0e7p-3, 0x1.15d50f81fa712p-3, 0x1.1718e37bf37bfp-3,  \
      0x1.185cbe706a74dp-3, 0x1.19a0a067c5e02p-3, 0x1.1ae4896a6d80ep-3, 0x1.1c287980ca5b3p-3, 0x1.1d6c70b346b57p-3,  \
      0x1.1eb06f0a4e1a3p-3, 0x1.1ff4748e4d59ap-3, 0x1.21388147b28b3p-3, 0x1.227c953eed0f4p-3, 0x1.23c0b07c6d908p-3,  \
      0x1.2504d308a605dp-3, 0x1.2648fcec09b3cp-3, 0x1.278d2e2f0d2e1p-3, 0x1.28d166da2659cp-3, 0x1.2a15a6f5cc6dfp-3,  \
      0x1.2b59ee8a77f63p-3, 0x1.2c9e3da0a2d40p-3, 0x1.2de29440c83fcp-3, 0x1.2f26f27364cbap-3, 0x1.306b5840f663ep-3,  \
      0x1.31afc5b1fc517p-3, 0x1.32f43acef73b4p-3, 0x1.3438b7a069276p-3, 0x1.357d3c2ed57dap-3, 0x1.36c1c882c108dp-3,  \
      0x1.38065ca4b1f7ap-3, 0x1.394af89d2fdfcp-3, 0x1.3a8f9c74c3be1p-3, 0x1.3bd44833f7f96p-3, 0x1.3d18fbe358638p-3,  \
      0x1.3e5db78b723b2p-3, 0x1.3fa27b34d42d6p-3, 0x1.40e746e80e57bp-3, 0x1.422c1aadb2492p-3, 0x1.4370f68e53046p-3,  \
      0x1.44b5da9285015p-3, 0x1.45fac6c2de2e9p-3, 0x1.473fbb27f5f37p-3, 0x1.4884b7ca65313p-3, 0x1.49c9bcb2c6459p-3,  \
      0x1.4b0ec9e9b50b3p-3, 0x1.4c53df77cedc7p-3, 0x1.4d98fd65b2948p-3, 0x1.4ede23bc00914p-3, 0x1.502352835ab52p-3,  \
      0x1.516889c464684p-3, 0x1.52adc987c29adp-3, 0x1.53f311d61bc6dp-3, 0x1.553862b817f09p-3, 0x1.567dbc3660aa1p-3,  \
      0x1.57c31e59a113cp-3, 0x1.5908892a85de3p-3, 0x1.5a4dfcb1bd4c8p-3, 0x1.5b9378f7f7353p-3, 0x1.5cd8fe05e5047p-3,  \
      0x1.5e1e8be439bdbp-3, 0x1.5f64229ba9fd3p-3, 0x1.60a9c234ebfa7p-3, 0x1.61ef6ab8b788fp-3, 0x1.63351c2fc61a7p-3,  \
      0x1.647ad6a2d2c11p-3, 0x1.65c09a1a9a304p-3, 0x1.6706669fdabf1p-3, 0x1.684c3c3b5469cp-3, 0x1.69921af5c8d38p-3,  \
      0x1.6ad802d7fb487p-3, 0x1.6c1df3eab0bf2p-3, 0x1.6d63ee36afda5p-3, 0x1.6ea9f1c4c0eacp-3, 0x1.6feffe9dadf15p-3,  \
      0x1.713614ca42a05p-3, 0x1.727c34534c5d5p-3, 0x1.73c25d419a437p-3, 0x1.75088f9dfd245p-3, 0x1.764ecb71478a7p-3,  \
      0x1.779510c44dbb4p-3, 0x1.78db5f9fe5b80p-3, 0x1.7a21b80ce7407p-3, 0x1.7b681a142bd43p-3, 0x1.7cae85be8eb48p-3,  \
      0x1.7df4fb14ece64p-3, 0x1.7f3b7a202533fp-3, 0x1.808202e9182eep-3, 0x1.81c89578a831cp-3, 0x1.830f31d7b961bp-3,  \
      0x1.8455d80f31b11p-3, 0x1.859c8827f8e04p-3, 0x1.86e3422af8800p-3, 0x1.882a06211bf3bp-3, 0x1.8970d41350724p-3,  \
      0x1.8ab7ac0a8508ap-3, 0x1.8bfe8e0faa9bap-3, 0x1.8d457a2bb3e93p-3, 0x1.8e8c7067958b4p-3, 0x1.8fd370cc45f8fp-3,  \
      0x1.911a7b62bd87bp-3, 0x1.92619033f66f5p-3, 0x1.93a8af48ecc97p-3, 0x1.94efd8aa9e94fp-3, 0x1.96370c620bb70p-3,  \
      0x1.977e4a7835fdcp-3, 0x1.98c592f621214p-3, 0x1.9a0ce5e4d2c65p-3, 0x1.9b54434d527f8p-3, 0x1.9c9bab38a9cfcp-3,  \
      0x1.9de31dafe42bdp-3, 0x1.9f2a9abc0efc7p-3, 0x1.a0722266399ffp-3, 0x1.a1b9b4b7756cdp-3, 0x1.a30151b8d5b28p-3,  \
      0x1.a448f9736fbc8p-3, 0x1.a590abf05ad35p-3, 0x1.a6d86938b03f9p-3, 0x1.a82031558b4a6p-3, 0x1.a968045009407p-3,  \
      0x1.aaafe23149739p-3, 0x1.abf7cb026d3d1p-3, 0x1.ad3fbecc97fe9p-3, 0x1.ae87bd98ef257p-3, 0x1.afcfc7709a2bdp-3,  \
      0x1.b117dc5cc29aap-3, 0x1.b25ffc66940bap-3, 0x1.b3a827973c2bap-3, 0x1.b4f05df7eabc4p-3, 0x1.b6389f91d195cp-3,  \
      0x1.b780ec6e24a99p-3, 0x1.b8c944961a034p-3, 0x1.ba11a812e9cbdp-3, 0x1.bb5a16edce4a5p-3, 0x1.bca2913003e70p-3,  \
      0x1.bdeb16e2c92d1p-3, 0x1.bf33a80f5ecbep-3, 0x1.c07c44bf0799dp-3, 0x1.c1c4ecfb08962p-3, 0x1.c30da0cca8ea6p-3,  \
      0x1.c456603d31ed7p-3, 0x1.c59f2b55ef251p-3, 0x1.c6e802202e472p-3, 0x1.c830e4a53f3d0p-3, 0x1.c979d2ee74254p-3,  \
      0x1.cac2cd0521548p-3, 0x1.cc0bd2f29d58cp-3, 0x1.cd54e4c040fb9p-3, 0x1.ce9e027767434p-3, 0x1.cfe72c216d74ap-3,  \
      0x1.d13061c7b316dp-3, 0x1.d279a37399f3ep-3, 0x1.d3c2f12e861b0p-3, 0x1.d50c4b01dde2cp-3, 0x1.d655b0f709ebcp-3,  \
      0x1.d79f23177521cp-3, 0x1.d8e8a16c8cbe9p-3, 0x1.da322bffc04b9p-3, 0x1.db7bc2da81a3fp-3, 0x1.dcc5660644f7ap-3,  \
      0x1.de0f158c80cb6p-3, 0x1.df58d176adfd5p-3, 0x1.e0a299ce47c5bp-3, 0x1.e1ec6e9ccbb8dp-3, 0x1.e3364febb9c9cp-3,  \
      0x1.e4803dc4944c6p-3, 0x1.e5ca3830dff80p-3, 0x1.e7143f3a23e7cp-3, 0x1.e85e52e9e99f3p-3, 0x1.e9a87349bd0a5p-3,  \
      0x1.eaf2a0632c80bp-3, 0x1.ec3cda3fc8c80p-3, 0x1.ed8720e925156p-3, 0x1.eed17468d7103p-3, 0x1.f01bd4c876d37p-3,  \
      0x1.f16642119ef11p-3, 0x1.f2b0bc4dec733p-3, 0x1.f3fb4386fede7p-3, 0x1.f545d7c678357p-3, 0x1.f6907915fcf84p-3,  \
      0x1.f7db277f3429bp-3, 0x1.f925e30bc74f4p-3, 0x1.fa70abc56274fp-3, 0x1.fbbb81b5b42dbp-3, 0x1.fd0664e66d979p-3,  \
      0x1.fe515561425cbp-3, 0x1.ff9c532fe8b5dp-3, 0x1.0073af2e0cb66p-2, 0x1.01193b77c7ef4p-2, 0x1.01bece7a04feap-2,  \
      0x1.02646839a4299p-2, 0x1.030a08bb87020p-2, 0x1.03afb0049067ep-2, 0x1.04555e19a48abp-2, 0x1.04fb12ffa8ea2p-2,  \
      0x1.05a0cebb84575p-2, 0x1.064691521ef63p-2, 0x1.06ec5ac8623e8p-2, 0x1.07922b2338fcep-2, 0x1.083802678f543p-2,  \
      0x1.08dde09a52be7p-2, 0x1.0983c5c0720e4p-2, 0x1.0a29b1dedd6fcp-2, 0x1.0acfa4fa86699p-2, 0x1.0b759f185fdf0p-2,  \
      0x1.0c1ba03d5e0fap-2, 0x1.0cc1a86e7699ap-2, 0x1.0d67b7b0a07afp-2, 0x1.0e0dce08d411bp-2, 0x1.0eb3eb7c0b1dep-2,  \
      0x1.0f5a100f40c2fp-2, 0x1.10003bc771880p-2, 0x1.10a66ea99b599p-2, 0x1.114ca8babd8b3p-2, 0x1.11f2e9ffd8d79p-2,  \
      0x1.1299327def630p-2, 0x1.133f823a04bb6p-2, 0x1.13e5d9391dda6p-2, 0x1.148c378041261p-2, 0x1.15329d1476725p-2,  \
      0x1.15d909fac7023p-2, 0x1.167f7e383d888p-2, 0x1.1725f9d1e62a3p-2, 0x1.17cc7cccce7e4p-2, 0x1.1873072e058fep-2,  \
      0x1.191998fa9bdf7p-2, 0x1.19c03237a3636p-2, 0x1.1a66d2ea2f8a1p-2, 0x1.1b0d7b17553aap-2, 0x1.1bb42ac42ad60p-2,  \
      0x1.1c5ae1f5c8389p-2, 0x1.1d01a0b146bb8p-2, 0x1.1da866fbc1358p-2, 0x1.1e4f34da53fc8p-2, 0x1.1ef60a521ce6cp-2,  \
      0x1.1f9ce7683b4c0p-2, 0x1.2043cc21d006fp-2, 0x1.20eab883fd764p-2, 0x1.2191ac93e77e4p-2, 0x1.2238a856b389ap-2,  \
      0x1.22dfabd1888b3p-2, 0x1.2386b7098efefp-2, 0x1.242dca03f0eb6p-2, 0x1.24d4e4c5d9e2ap-2, 0x1.257c075477046p-2,  \
      0x1.262331b4f6fe2p-2, 0x1.26ca63ec8a0d5p-2, 0x1.27719e0062005p-2, 0x1.2818dff5b237cp-2, 0x1.28c029d1afa7ep-2,  \
      0x1.29677b9990d9dp-2, 0x1.2a0ed5528decep-2, 0x1.2ab63701e097fp-2, 0x1.2b5da0acc42a9p-2, 0x1.2c051258758eep-2,  \
      0x1.2cac8c0a3349dp-2, 0x1.2d540dc73d7dep-2, 0x1.2dfb9794d5eb3p-2, 0x1.2ea329783ff1ap-2, 0x1.2f4ac376c091ep-2,  \
      0x1.2ff265959e6eap-2, 0x1.309a0fda21ce8p-2, 0x1.3141c249949cbp-2, 0x1.31e97ce9426a5p-2, 0x1.32913fbe7870bp-2,  \
      0x1.33390ace85921p-2, 0x1.33e0de1eba5a6p-2, 0x1.3488b9b469022p-2, 0x1.35309d94e56e2p-2, 0x1.35d889c585320p-2,  \
      0x1.36807e4b9f910p-2, 0x1.37287b2c8d802p-2, 0x1.37d0806da9a65p-2, 0x1.38788e14505ecp-2, 0x1.3920a425dfba4p-2,  \
      0x1.39c8c2a7b77ffp-2, 0x1.3a70e99f392f9p-2, 0x1.3b191911c8021p-2, 0x1.3bc15104c8ebep-2, 0x1.3c69917da29d8p-2,  \
      0x1.3d11da81bd857p-2, 0x1.3dba2c1683d15p-2, 0x1.3e628641616f9p-2, 0x1.3f0ae907c410bp-2, 0x1.3fb3546f1b28fp-2,  \
      0x1.405bc87cd7f11p-2, 0x1.410445366d690p-2, 0x1.41accaa150580p-2, 0x1.425558c2f74eap-2, 0x1.42fdefa0daa8bp-2,  \
      0x1.43a68f40748dbp-2, 0x1.444f37a740f36p-2, 0x1.44f7e8dabd9e4p-2, 0x1.45a0a2e06a23ap-2, 0x1.464965bdc7eafp-2,  \
      0x1.46f231785a2f3p-2, 0x1.479b0615a600bp-2, 0x1.4843e39b3245dp-2, 0x1.48ecca0e87bd5p-2, 0x1.4995b97530ff9p-2,  \
      0x1.4a3eb1d4ba800p-2, 0x1.4ae7b332b28e6p-2, 0x1.4b90bd94a9589p-2, 0x1.4c39d10030ec1p-2, 0x1.4ce2ed7add37cp-2,  \
      0x1.4d8c130a440c8p-2, 0x1.4e3541b3fd200p-2, 0x1.4ede797da20d1p-2, 0x1.4f87ba6cce55fp-2, 0x1.503104871f657p-2,  \
      0x1.50da57d23490ep-2, 0x1.5183b453af198p-2, 0x1.522d1a11322d6p-2, 0x1.52d6891062e9fp-2, 0x1.53800156e85d1p-2,  \
      0x1.542982ea6b86dp-2, 0x1.54d30dd0975a4p-2, 0x1.557ca20f18c07p-2, 0x1.56263fab9e98ap-2, 0x1.56cfe6abd9ba8p-2,  \
      0x1.577997157cf83p-2, 0x1.582350ee3d1eap-2, 0x1.58cd143bd0f83p-2, 0x1.5976e103f14e2p-2, 0x1.5a20b74c58e9dp-2,  \
      0x1.5aca971ac496ap-2, 0x1.5b748074f3238p-2, 0x1.5c1e7360a5646p-2, 0x1.5cc86fe39e344p-2, 0x1.5d727603a2767p-2,  \
      0x1.5e1c85c679183p-2, 0x1.5ec69f31eb12ep-2, 0x1.5f70c24bc36c4p-2, 0x1.601aef19cf3a2p-2, 0x1.60c525a1dda28p-2,  \
      0x1.616f65e9bfdd5p-2, 0x1.6219aff749371p-2, 0x1.62c403d04f11ap-2, 0x1.636e617aa8e5dp-2, 0x1.6418c8fc30460p-2,  \
      0x1.64c33a5ac0debp-2, 0x1.656db59c38793p-2, 0x1.66183ac676fc2p-2, 0x1.66c2c9df5e6efp-2, 0x1.676d62ecd2f94p-2,  \
      0x1.681805f4bae6bp-2, 0x1.68c2b2fcfea75p-2, 0x1.696d6a0b88d21p-2, 0x1.6a182b2646258p-2, 0x1.6ac2f653258acp-2,  \
      0x1.6b6dcb9818171p-2, 0x1.6c18aafb110c0p-2, 0x1.6cc3948205db0p-2, 0x1.6d6e8832ee26dp-2, 0x1.6e198613c3c42p-2,  \
      0x1.6ec48e2a82bcap-2, 0x1.6f6fa07d29501p-2, 0x1.701abd11b7f64p-2, 0x1.70c5e3ee31607p-2, 0x1.717115189a7c0p-2,  \
      0x1.721c5096fa730p-2, 0x1.72c7966f5aaf6p-2, 0x1.7372e6a7c6db5p-2, 0x1.741e41464ce41p-2, 0x1.74c9a650fcfb1p-2,  \
      0x1.757515cde998cp-2, 0x1.76208fc3277cfp-2, 0x1.76cc1436cdb20p-2, 0x1.7777a32ef58dbp-2, 0x1.78233cb1bab3ap-2,  \
      0x1.78cee0c53b174p-2, 0x1.797a8f6f96fc4p-2, 0x1.7a2648b6f0fa9p-2, 0x1.7ad20ca16dfeep-2, 0x1.7b7ddb35354c4p-2,  \
      0x1.7c29b478707f4p-2, 0x1.7cd598714b8e9p-2, 0x1.7d818725f4cdap-2, 0x1.7e2d809c9cedfp-2, 0x1.7ed984db7701bp-2,  \
      0x1.7f8593e8b87cfp-2, 0x1.8031adca99386p-2, 0x1.80ddd2875371bp-2, 0x1.818a022523cf5p-2, 0x1.82363caa49613p-2,  \
      0x1.82e2821d05a2fp-2, 0x1.838ed2839c7e2p-2, 0x1.843b2de4544bdp-2, 0x1.84e7944575d65p-2, 0x1.859405ad4c5bdp-2,  \
      0x1.8640822225901p-2, 0x1.86ed09aa519dcp-2, 0x1.87999c4c23298p-2, 0x1.88463a0def52fp-2, 0x1.88f2e2f60db73p-2,  \
      0x1.899f970ad8729p-2, 0x1.8a4c5652ac230p-2, 0x1.8af920d3e7e99p-2, 0x1.8ba5f694ed6cap-2, 0x1.8c52d79c20d9fp-2,  \
      0x1.8cffc3efe8e8ap-2, 0x1.8dacbb96aedb7p-2, 0x1.8e59be96de821p-2, 0x1.8f06ccf6e63c3p-2, 0x1.8fb3e6bd36fabp-2,  \
      0x1.90610bf044417p-2, 0x1.910e3c96842b6p-2, 0x1.91bb78b66f69dp-2, 0x1.9268c05681485p-2, 0x1.9316137d37ae4p-2,  \
      0x1.93c3723113209p-2, 0x1.9470dc7896c4ep-2, 0x1.951e525a48627p-2, 0x1.95cbd3dcb0645p-2, 0x1.9679610659dccp-2,  \
      0x1.9726f9ddd285dp-2, 0x1.97d49e69aac44p-2, 0x1.98824eb075a99p-2, 0x1.99300ab8c8f5dp-2, 0x1.99ddd2893d1a9p-2,  \
      0x1.9a8ba6286d3bdp-2, 0x1.9b39859cf7336p-2, 0x1.9be770ed7b91ep-2, 0x1.9c9568209da24p-2, 0x1.9d436b3d036b1p-2,  \
      0x1.9df17a4955b03p-2, 0x1.9e9f954c3ff67p-2, 0x1.9f4dbc4c7084ap-2, 0x1.9ffbef5098661p-2, 0x1.a0aa2e5f6b6d7p-2,  \
      0x1.a158797fa0358p-2, 0x1.a206d0b7f024fp-2, 0x1.a2b5340f176fbp-2, 0x1.a363a38bd5197p-2, 0x1.a4121f34eaf79p-2,  \
      0x1.a4c0a7111db42p-2, 0x1.a56f3b2734cfcp-2, 0x1.a61ddb7dfaa30p-2, 0x1.a6cc881c3c626p-2, 0x1.a77b4108ca1f2p-2,  \
      0x1.a82a064a76ca9p-2, 0x1.a8d8d7e81837bp-2, 0x1.a987b5e8871dcp-2, 0x1.aa36a0529f1a9p-2, 0x1.aae5972d3eb50p-2,  \
      0x1.ab949a7f475eep-2, 0x1.ac43aa4f9d77dp-2, 0x1.acf2c6a5284f4p-2, 0x1.ada1ef86d2270p-2, 0x1.ae5124fb88354p-2,  \
      0x1.af00670a3aa77p-2, 0x1.afafb5b9dca46p-2, 0x1.b05f1111644e8p-2, 0x1.b10e7917cac69p-2, 0x1.b1bdedd40c2e0p-2,  \
      0x1.b26d6f4d27a91p-2, 0x1.b31cfd8a1f618p-2, 0x1.b3cc9891f888ap-2, 0x1.b47c406bbb5a9p-2, 0x1.b52bf51e731fcp-2,  \
      0x1.b5dbb6b12e302p-2, 0x1.b68b852afdf52p-2, 0x1.b73b6092f6ec2p-2, 0x1.b7eb48f030a94p-2, 0x1.b89b3e49c5d9ep-2,  \
      0x1.b94b40a6d446bp-2, 0x1.b9fb500e7cd66p-2, 0x1.baab6c87e390cp-2, 0x1.bb5b961a2fa07p-2, 0x1.bc0bcccc8b555p-2,  \
      0x1.bcbc10a624285p-2, 0x1.bd6c61ae2abc1p-2, 0x1.be1cbfebd2e17p-2, 0x1.becd2b6653986p-2, 0x1.bf7da424e7140p-2,  \
      0x1.c02e2a2ecabbcp-2, 0x1.c0debd8b3f2efp-2, 0x1.c18f5e4188473p-2, 0x1.c2400c58ed1b0p-2, 0x1.c2f0c7d8b8000p-2,  \
      0x1.c3a190c8368e0p-2, 0x1.c452672eb9a15p-2, 0x1.c5034b13955e0p-2, 0x1.c5b43c7e2131dp-2, 0x1.c6653b75b7d78p-2,  \
      0x1.c7164801b7586p-2, 0x1.c7c7622981108p-2, 0x1.c87889f479b03p-2, 0x1.c929bf6a093f7p-2, 0x1.c9db02919b201p-2,  \
      0x1.ca8c53729e111p-2, 0x1.cb3db21484307p-2, 0x1.cbef1e7ec2ff6p-2, 0x1.cca098b8d3630p-2, 0x1.cd5220ca31a8ep-2,  \
      0x1.ce03b6ba5d890p-2, 0x1.ceb55a90da28fp-2, 0x1.cf670c552e1dbp-2, 0x1.d018cc0ee3700p-2, 0x1.d0ca99c5879dbp-2,  \
      0x1.d17c7580ab9d9p-2, 0x1.d22e5f47e3e17p-2, 0x1.d2e05722c8599p-2, 0x1.d3925d18f4771p-2, 0x1.d4447132072f0p-2,  \
      0x1.d4f69375a2fd2p-2, 0x1.d5a8c3eb6de74p-2, 0x1.d65b029b117f5p-2, 0x1.d70d4f8c3ae64p-2, 0x1.d7bfaac69ad03p-2,  \
      0x1.d8721451e585cp-2, 0x1.d9248c35d2e89p-2, 0x1.d9d7127a1e748p-2, 0x1.da89a7268743bp-2, 0x1.db3c4a42d011cp-2,  \
      0x1.dbeefbd6bf3dap-2, 0x1.dca1bbea1ecd9p-2, 0x1.dd548a84bc71bp-2, 0x1.de0767ae69872p-2, 0x1.deba536efb1aap-2,  \
      0x1.df6d4dce49ec7p-2, 0x1.e02056d432727p-2, 0x1.e0d36e8894db9p-2, 0x1.e18694f35512dp-2, 0x1.e239ca1c5ac2dp-2,  \
      0x1.e2ed0e0b9157bp-2, 0x1.e3a060c8e803cp-2, 0x1.e453c25c51c0bp-2, 0x1.e50732cdc5548p-2, 0x1.e5bab2253d53ep-2,  \
      0x1.e66e406ab824dp-2, 0x1.e721dda638029p-2, 0x1.e7d589dfc3004p-2, 0x1.e889451f630cdp-2, 0x1.e93d0f6d25f46p-2,  \
      0x1.e9f0e8d11d664p-2, 0x1.eaa4d1535ef56p-2, 0x1.eb58c8fc041d3p-2, 0x1.ec0ccfd32a445p-2, 0x1.ecc0e5e0f2c02p-2,  \
      0x1.ed750b2d82d76p-2, 0x1.ee293fc103c5ap-2, 0x1.eedd83a3a2bf6p-2, 0x1.ef91d6dd90f40p-2, 0x1.f046397703921p-2,  \
      0x1.f0faab7833ca8p-2, 0x1.f1af2ce95ed34p-2, 0x1.f263bdd2c5eb6p-2, 0x1.f3185e3cae5d8p-2, 0x1.f3cd0e2f6184bp-2,  \
      0x1.f481cdb32cce6p-2, 0x1.f5369cd061be0p-2, 0x1.f5eb7b8f55f16p-2, 0x1.f6a069f863227p-2, 0x1.f7556813e72bfp-2,  \
      0x1.f80a75ea440d0p-2, 0x1.f8bf9383dfec0p-2, 0x1.f974c0e925195p-2, 0x1.fa29fe2282144p-2, 0x1.fadf4b38698dfp-2,  \
      0x1.fb94a833526c5p-2, 0x1.fc4a151bb7ce7p-2, 0x1.fcff91fa190fdp-2, 0x1.fdb51ed6f9cafp-2, 0x1.fe6abbbae1de7p-2,  \
      0x1.ff2068ae5d6fbp-2, 0x1.ffd625b9fcee6p-2, 0x1.0045f9732a8c4p-1, 0x1.00a0e81dff7ebp-1, 0x1.00fbdee1cc012p-1,  \
      0x1.0156ddc2e0f26p-1, 0x1.01b1e4c5915f8p-1, 0x1.020cf3ee3285ep-1, 0x1.02680b411bd4dp-1, 0x1.02c32ac2a6ef3p-1,  \
      0x1.031e52772fadcp-1, 0x1.037982631420bp-1, 0x1.03d4ba8ab4916p-1, 0x1.042ffaf273849p-1, 0x1.048b439eb5bc2p-1,  \
      0x1.04e69493e238ep-1, 0x1.0541edd6623c9p-1, 0x1.059d4f6aa14b8p-1, 0x1.05f8b9550d2edp-1, 0x1.06542b9a15f67p-1,  \
      0x1.06afa63e2dfa6p-1, 0x1.070b2945c9dd7p-1, 0x1.0766b4b5608e9p-1, 0x1.07c248916b4b3p-1, 0x1.081de4de65a0fp-1,  \
      0x1.087989a0cd6fap-1, 0x1.08d536dd22eb2p-1, 0x1.0930ec97e89dep-1, 0x1.098caad5a36a1p-1, 0x1.09e8719ada8c3p-1,  \
      0x1.0a4440ec179cap-1, 0x1.0aa018cde6921p-1, 0x1.0afbf944d5c39p-1, 0x1.0b57e25575e9cp-1, 0x1.0bb3d4045a21fp-1,  \
      0x1.0c0fce5617ef7p-1, 0x1.0c6bd14f473dcp-1, 0x1.0cc7dcf48262cp-1, 0x1.0d23f14a6620bp-1, 0x1.0d800e5591a80p-1,  \
      0x1.0ddc341aa69a3p-1, 0x1.0e38629e490aap-1, 0x1.0e9499e51f81cp-1, 0x1.0ef0d9f3d2febp-1, 0x1.0f4d22cf0ef97p-1,  \
      0x1.0fa9747b8164fp-1, 0x1.1005cefddab13p-1, 0x1.1062325acdcdap-1, 0x1.10be9e97102abp-1, 0x1.111b13b759bc9p-1,  \
      0x1.117791c064fd3p-1, 0x1.11d418b6eeee6p-1, 0x1.1230a89fb71b9p-1, 0x1.128d417f7f9c9p-1, 0x1.12e9e35b0d17ep-1,  \
      0x1.13468e3726c42p-1, 0x1.13a34218966b1p-1, 0x1.13ffff04286afp-1, 0x1.145cc4feabb9fp-1, 0x1.14b9940cf1e74p-1,  \
      0x1.15166c33cf1dcp-1, 0x1.15734d781a266p-1, 0x1.15d037deac6a6p-1, 0x1.162d2b6c61f51p-1, 0x1.168a282619773p-1,  \
      0x1.16e72e10b447ep-1, 0x1.17443d311667dp-1, 0x1.17a1558c26838p-1, 0x1.17fe7726cdf54p-1, 0x1.185ba205f8c77p-1,  \
      0x1.18b8d62e95b7ap-1, 0x1.191613a59637dp-1, 0x1.19735a6fee716p-1, 0x1.19d0aa929547ap-1, 0x1.1a2e04128459ap-1,  \
      0x1.1a8b66f4b804ep-1, 0x1.1ae8d33e2f67fp-1, 0x1.1b4648f3ec643p-1, 0x1.1ba3c81af3a11p-1, 0x1.1c0150b84c8dcp-1,  \
      0x1.1c5ee2d10163dp-1, 0x1.1cbc7e6a1f29cp-1, 0x1.1d1a2388b5b5ep-1, 0x1.1d77d231d7af7p-1, 0x1.1dd58a6a9a92ep-1,  \
      0x1.1e334c3816b28p-1, 0x1.1e91179f673acp-1, 0x1.1eeeeca5aa330p-1, 0x1.1f4ccb5000815p-1, 0x1.1faab3a38dec7p-1,  \
      0x1.2008a5a5791e5p-1, 0x1.2066a15aeba6dp-1, 0x1.20c4a6c911fe0p-1, 0x1.2122b5f51b872p-1, 0x1.2180cee43a92ap-1,  \
      0x1.21def19ba461cp-1, 0x1.223d1e2091273p-1, 0x1.229b54783c0c3p-1, 0x1.22f994a7e330bp-1, 0x1.2357deb4c7b08p-1,  \
      0x1.23b632a42da33p-1, 0x1.2414907b5c210p-1, 0x1.2472f83f9d448p-1, 0x1.24d169f63e2d1p-1, 0x1.252fe5a48f023p-1,  \
      0x1.258e6b4fe2f59p-1, 0x1.25ecfafd90463p-1, 0x1.264b94b2f0432p-1, 0x1.26aa38755f4dbp-1, 0x1.2708e64a3cdcfp-1,  \
      0x1.27679e36eb7f8p-1, 0x1.27c66040d0df6p-1, 0x1.28252c6d55c3fp-1, 0x1.288402c1e614fp-1, 0x1.28e2e343f0dd6p-1,  \
      0x1.2941cdf8e84e1p-1, 0x1.29a0c2e641c0fp-1, 0x1.29ffc21175bb4p-1, 0x1.2a5ecb7ffff0ep-1, 0x1.2abddf375f472p-1,  \
      0x1.2b1cfd3d15d70p-1, 0x1.2b7c2596a8f11p-1, 0x1.2bdb5849a11f7p-1, 0x1.2c3a955b8a29ap-1, 0x1.2c99dcd1f3164p-1,  \
      0x1.2cf92eb26e2edp-1, 0x1.2d588b0291026p-1, 0x1.2db7f1c7f468fp-1, 0x1.2e17630834854p-1, 0x1.2e76dec8f0c94p-1,  \
      0x1.2ed6650fcbf7fp-1, 0x1.2f35f5e26c290p-1, 0x1.2f9591467acb5p-1, 0x1.2ff53741a4a87p-1, 0x1.3054e7d999e76p-1,  \
      0x1.30b4a3140e0fdp-1, 0x1.311468f6b80cfp-1, 0x1.317439875230bp-1, 0x1.31d414cb9a36fp-1, 0x1.3233fac951483p-1,  \
      0x1.3293eb863bfd2p-1, 0x1.32f3e70822617p-1, 0x1.3353ed54cff76p-1, 0x1.33b3fe7213ba4p-1, 0x1.34141a65c0222p-1,  \
      0x1.34744135ab273p-1, 0x1.34d472e7ae43fp-1, 0x1.3534af81a6799p-1, 0x1.3594f70974527p-1, 0x1.35f54984fbe57p-1,  \
      0x1.3655a6fa24d9ep-1, 0x1.36b60f6eda699p-1, 0x1.371682e90b656p-1, 0x1.3777016eaa375p-1, 0x1.37d78b05ace6fp-1,  \
      0x1.38381fb40d1b8p-1, 0x1.3898bf7fc820bp-1, 0x1.38f96a6edee8cp-1, 0x1.395a208756109p-1, 0x1.39bae1cf35e2dp-1,  \
      0x1.3a1bae4c8a5adp-1, 0x1.3a7c860563299p-1, 0x1.3add68ffd3b6ep-1, 0x1.3b3e5741f326cp-1, 0x1.3b9f50d1dc5c1p-1,  \
      0x1.3c0055b5adfb7p-1, 0x1.3c6165f38a707p-1, 0x1.3cc2819197eedp-1, 0x1.3d23a89600781p-1, 0x1.3d84db06f1dd8p-1,  \
      0x1.3de618ea9dc4cp-1, 0x1.3e47624739ab0p-1, 0x1.3ea8b722fee82p-1, 0x1.3f0a17842ab30p-1, 0x1.3f6b8370fe24ap-1,  \
      0x1.3fccfaefbe3c0p-1, 0x1.402e7e06b3e19p-1, 0x1.40900cbc2beb5p-1, 0x1.40f1a716771f8p-1, 0x1.41534d1bea399p-1,  \
      0x1.41b4fed2ddecfp-1, 0x1.4216bc41aee92p-1, 0x1.4278856ebddd5p-1, 0x1.42da5a606f7bep-1, 0x1.433c3b1d2c7f3p-1,  \
      0x1.439e27ab61ac1p-1, 0x1.440020117fd66p-1, 0x1.44622455fbe49p-1, 0x1.44c4347f4ed41p-1, 0x1.45265093f5bc0p-1,  \
      0x1.4588789a71d23p-1, 0x1.45eaac99486e7p-1, 0x1.464cec97030eep-1, 0x1.46af389a2f5b1p-1, 0x1.471190a95f292p-1,  \
      0x1.4773f4cb2880ap-1, 0x1.47d66506259f4p-1, 0x1.4838e160f4fc7p-1, 0x1.489b69e2394d8p-1, 0x1.48fdfe909989cp-1,  \
      0x1.49609f72c0ee9p-1, 0x1.49c34c8f5f030p-1, 0x1.4a2605ed279c9p-1, 0x1.4a88cb92d2e32p-1, 0x1.4aeb9d871d549p-1,  \
      0x1.4b4e7bd0c7c99p-1, 0x1.4bb1667697795p-1, 0x1.4c145d7f55fe0p-1, 0x1.4c7760f1d158cp-1, 0x1.4cda70d4dbf64p-1,  \
      0x1.4d3d8d2f4cb26p-1, 0x1.4da0b607fedd0p-1, 0x1.4e03eb65d23dfp-1, 0x1.4e672d4fab19ep-1, 0x1.4eca7bcc72356p-1,  \
      0x1.4f2dd6e314dabp-1, 0x1.4f913e9a84dcfp-1, 0x1.4ff4b2f9b89dep-1, 0x1.50583407ab109p-1, 0x1.50bbc1cb5bbf2p-1,  \
      0x1.511f5c4bcece6p-1, 0x1.518303900d02ep-1, 0x1.51e6b79f23c58p-1, 0x1.524a788025270p-1, 0x1.52ae463a27e58p-1,  \
      0x1.531220d447708p-1, 0x1.53760855a3edbp-1, 0x1.53d9fcc5623ddp-1, 0x1.543dfe2aac002p-1, 0x1.54a20c8caf98dp-1,  \
      0x1.550627f2a033cp-1, 0x1.556a5063b5cabp-1, 0x1.55ce85e72d294p-1, 0x1.5632c88447f1bp-1, 0x1.569718424ca1cp-1,  \
      0x1.56fb752886971p-1, 0x1.575fdf3e4614ap-1, 0x1.57c4568ae0474p-1, 0x1.5828db15af49fp-1, 0x1.588d6ce6122b5p-1,  \
      0x1.58f20c036cf2fp-1, 0x1.5956b87528a49p-1, 0x1.59bb7242b3471p-1, 0x1.5a2039737fe7cp-1, 0x1.5a850e0f06a06p-1,  \
      0x1.5ae9f01cc49bdp-1, 0x1.5b4edfa43c1a9p-1, 0x1.5bb3dcacf478bp-1, 0x1.5c18e73e7a329p-1, 0x1.5c7dff605ee93p-1,  \
      0x1.5ce3251a39688p-1, 0x1.5d485873a5abdp-1, 0x1.5dad997444e32p-1, 0x1.5e12e823bd784p-1, 0x1.5e784489bb142p-1,  \
      0x1.5eddaeadeea3dp-1, 0x1.5f4326980e5e8p-1, 0x1.5fa8ac4fd5c9cp-1, 0x1.600e3fdd05bf4p-1, 0x1.6073e14764726p-1,  \
      0x1.60d99096bd756p-1, 0x1.613f4dd2e1bf1p-1, 0x1.61a51903a7af1p-1, 0x1.620af230eb150p-1, 0x1.6270d9628d348p-1,  \
      0x1.62d6cea074cbcp-1, 0x1.633cd1f28e181p-1, 0x1.63a2e360cadc3p-1, 0x1.640902f322658p-1, 0x1.646f30b19191ap-1,  \
      0x1.64d56ca41ad42p-1, 0x1.653bb6d2c63c7p-1, 0x1.65a20f45a17adp-1, 0x1.66087604bfe6ep-1, 0x1.666eeb183a84cp-1,  \
      0x1.66d56e88300b7p-1, 0x1.673c005cc4e99p-1, 0x1.67a2a09e234c8p-1, 0x1.68094f547b254p-1, 0x1.68700c88022edp-1,  \
      0x1.68d6d840f3f3bp-1, 0x1.693db28791d48p-1, 0x1.69a49b64230d2p-1, 0x1.6a0b92def4bb7p-1, 0x1.6a72990059e49p-1,  \
      0x1.6ad9add0ab7c0p-1, 0x1.6b40d15848686p-1, 0x1.6ba8039f958adp-1, 0x1.6c0f44aefdc48p-1, 0x1.6c76948ef1fc7p-1,  \
      0x1.6cddf347e9269p-1, 0x1.6d4560e260495p-1, 0x1.6dacdd66da843p-1, 0x1.6e1468dde1160p-1, 0x1.6e7c035003632p-1,  \
      0x1.6ee3acc5d6fc1p-1, 0x1.6f4b6547f7a39p-1, 0x1.6fb32cdf07557p-1, 0x1.701b0393ae4c4p-1, 0x1.7082e96e9b090p-1,  \
      0x1.70eade788258ap-1, 0x1.7152e2ba1f5adp-1, 0x1.71baf63c3388fp-1, 0x1.7223190786bc9p-1, 0x1.728b4b24e7359p-1,  \
      0x1.72f38c9d29a1ap-1, 0x1.735bdd7929228p-1, 0x1.73c43dc1c7549p-1, 0x1.742cad7fec56ap-1, 0x1.74952cbc86cefp-1,  \
      0x1.74fdbb808bf44p-1, 0x1.756659d4f792fp-1, 0x1.75cf07c2cc152p-1, 0x1.7637c55312886p-1, 0x1.76a0928edaa65p-1,  \
      0x1.77096f7f3ada4p-1, 0x1.77725c2d50492p-1, 0x1.77db58a23ed81p-1, 0x1.784464e73133fp-1, 0x1.78ad810558d88p-1,  \
      0x1.7916ad05ee178p-1, 0x1.797fe8f2301f7p-1, 0x1.79e934d365042p-1, 0x1.7a5290b2d9c4bp-1, 0x1.7abbfc99e253ap-1,  \
      0x1.7b257891d99edp-1, 0x1.7b8f04a42194ep-1, 0x1.7bf8a0da232f5p-1, 0x1.7c624d3d4e783p-1, 0x1.7ccc09d71a926p-1,  \
      0x1.7d35d6b105c0fp-1, 0x1.7d9fb3d4956f2p-1, 0x1.7e09a14b5637bp-1, 0x1.7e739f1edbecbp-1, 0x1.7eddad58c19f5p-1,  \
      0x1.7f47cc02a9a7dp-1, 0x1.7fb1fb263dad5p-1, 0x1.801c3acd2ead2p-1, 0x1.80868b013503ap-1, 0x1.80f0ebcc1073ap-1,  \
      0x1.815b5d37882e5p-1, 0x1.81c5df4d6adbdp-1, 0x1.823072178ea2ap-1, 0x1.829b159fd130ap-1, 0x1.8305c9f017c1ep-1,  \
      0x1.83708f124f2abp-1, 0x1.83db65106bde3p-1, 0x1.84464bf469f7ep-1, 0x1.84b143c84d432p-1, 0x1.851c4c9621439p-1,  \
      0x1.85876667f93edp-1, 0x1.85f29147f0434p-1, 0x1.865dcd402931bp-1, 0x1.86c91a5acec52p-1, 0x1.873478a2139c8p-1,  \
      0x1.879fe82032429p-1, 0x1.880b68df6d362p-1, 0x1.8876faea0ef41p-1, 0x1.88e29e4a69ff5p-1, 0x1.894e530ad8e9bp-1,  \
      0x1.89ba1935be5d7p-1, 0x1.8a25f0d585259p-1, 0x1.8a91d9f4a0371p-1, 0x1.8afdd49d8ab9bp-1, 0x1.8b69e0dac8119p-1,  \
      0x1.8bd5feb6e3e84p-1, 0x1.8c422e3c72359p-1, 0x1.8cae6f760f491p-1, 0x1.8d1ac26e5fd31p-1, 0x1.8d87273010eeep-1,  \
      0x1.8df39dc5d82b0p-1, 0x1.8e60263a73934p-1, 0x1.8eccc098a9ba6p-1, 0x1.8f396ceb49c33p-1, 0x1.8fa62b3d2b6aap-1,  \
      0x1.9012fb992f10dp-1, 0x1.907fde0a3dc38p-1, 0x1.90ecd29b49471p-1, 0x1.9159d9574c210p-1, 0x1.91c6f24949a14p-1,  \
      0x1.92341d7c4decbp-1, 0x1.92a15afb6e068p-1, 0x1.930eaad1c7db0p-1, 0x1.937c0d0a82486p-1, 0x1.93e981b0cd2acp-1,  \
      0x1.945708cfe1645p-1, 0x1.94c4a27300e97p-1, 0x1.95324ea576c97p-1, 0x1.95a00d72973a5p-1, 0x1.960ddee5bfa1fp-1,  \
      0x1.967bc30a56a1dp-1, 0x1.96e9b9ebcc203p-1, 0x1.9757c3959953fp-1, 0x1.97c5e01340ce9p-1, 0x1.98340f704e86dp-1,  \
      0x1.98a251b857e43p-1, 0x1.9910a6f6fbc8fp-1, 0x1.997f0f37e29d7p-1, 0x1.99ed8a86be5b1p-1, 0x1.9a5c18ef4a974p-1,  \
      0x1.9acaba7d4c8e7p-1, 0x1.9b396f3c932f7p-1, 0x1.9ba83738f726bp-1, 0x1.9c17127e5ae8dp-1, 0x1.9c860118aabf1p-1,  \
      0x1.9cf50313dcd23p-1, 0x1.9d64187bf135ap-1, 0x1.9dd3415cf1f39p-1, 0x1.9e427dc2f3181p-1, 0x1.9eb1cdba12bd5p-1,  \
      0x1.9f21314e7916ap-1, 0x1.9f90a88c587cbp-1, 0x1.a000337fed79dp-1, 0x1.a06fd2357ed4fp-1, 0x1.a0df84b95d9e5p-1,  \
      0x1.a14f4b17e53b5p-1, 0x1.a1bf255d7b72dp-1, 0x1.a22f13969078fp-1, 0x1.a29f15cf9efbfp-1, 0x1.a30f2c152c301p-1,  \
      0x1.a37f5673c7dc6p-1, 0x1.a3ef94f80c669p-1, 0x1.a45fe7ae9ee0bp-1, 0x1.a4d04ea42f144p-1, 0x1.a540c9e577909p-1,  \
      0x1.a5b1597f3db65p-1, 0x1.a621fd7e51c50p-1, 0x1.a692b5ef8ee77p-1, 0x1.a70382dfdb41ap-1, 0x1.a774645c27fc9p-1,  \
      0x1.a7e55a717154bp-1, 0x1.a856652cbea60p-1, 0x1.a8c7849b227a7p-1, 0x1.a938b8c9ba966p-1, 0x1.a9aa01c5b0069p-1,  \
      0x1.aa1b5f9c372d9p-1, 0x1.aa8cd25a8fd18p-1, 0x1.aafe5a0e05296p-1, 0x1.ab6ff6c3edebap-1, 0x1.abe1a889ac5b1p-1,  \
      0x1.ac536f6cae558p-1, 0x1.acc54b7a6d618p-1, 0x1.ad373cc06ebcbp-1, 0x1.ada9434c4369bp-1, 0x1.ae1b5f2b883eap-1,  \
      0x1.ae8d906be5f37p-1, 0x1.aeffd71b11301p-1, 0x1.af723346ca9bfp-1, 0x1.afe4a4fcdeeb3p-1, 0x1.b0572c4b26eeap-1,  \
      0x1.b0c9c93f87a18p-1, 0x1.b13c7be7f2398p-1, 0x1.b1af44526434cp-1, 0x1.b222228ce7693p-1, 0x1.b29516a592146p-1,  \
      0x1.b30820aa86e9cp-1, 0x1.b37b40a9f5229p-1, 0x1.b3ee76b2188d3p-1, 0x1.b461c2d1399c7p-1, 0x1.b4d52515ad77cp-1,  \
      0x1.b5489d8dd60a9p-1, 0x1.b5bc2c4822136p-1, 0x1.b62fd1530d359p-1, 0x1.b6a38cbd2007ap-1, 0x1.b7175e94f0239p-1,  \
      0x1.b78b46e92037ep-1, 0x1.b7ff45c860179p-1, 0x1.b8735b416cc9dp-1, 0x1.b8e78763109b6p-1, 0x1.b95bca3c232efp-1,  \
      0x1.b9d023db898d6p-1, 0x1.ba44945036379p-1, 0x1.bab91ba92935dp-1, 0x1.bb2db9f5702a2p-1, 0x1.bba26f4426612p-1,  \
      0x1.bc173ba474e2dp-1, 0x1.bc8c1f259283fp-1, 0x1.bd0119d6c3f80p-1, 0x1.bd762bc75be23p-1, 0x1.bdeb5506bae77p-1,  \
      0x1.be6095a44fc00p-1, 0x1.bed5edaf97492p-1, 0x1.bf4b5d381c978p-1, 0x1.bfc0e44d79094p-1, 0x1.c03682ff5457bp-1,  \
      0x1.c0ac395d64a9ep-1, 0x1.c12207776ea7bp-1, 0x1.c197ed5d458b6p-1, 0x1.c20deb1ecb34ap-1, 0x1.c28400cbf03bdp-1,  \
      0x1.c2fa2e74b4045p-1, 0x1.c370742924cf8p-1, 0x1.c3e6d1f95fd06p-1, 0x1.c45d47f5913e5p-1, 0x1.c4d3d62df468cp-1,  \
      0x1.c54a7cb2d3caep-1, 0x1.c5c13b94891edp-1, 0x1.c63812e37d716p-1, 0x1.c6af02b02936ap-1, 0x1.c7260b0b145d3p-1,  \
      0x1.c79d2c04d6625p-1, 0x1.c81465ae1666cp-1, 0x1.c88bb8178b42dp-1, 0x1.c9032351fb9b3p-1, 0x1.c97aa76e3df47p-1,  \
      0x1.c9f2447d38c98p-1, 0x1.ca69fa8fe29fap-1, 0x1.cae1c9b7421b1p-1, 0x1.cb59b2046e159p-1, 0x1.cbd1b3888db23p-1,  \
      0x1.cc49ce54d873fp-1, 0x1.ccc2027a9652ap-1, 0x1.cd3a500b1fd14p-1, 0x1.cdb2b717de134p-1, 0x1.ce2b37b24af2fp-1,  \
      0x1.cea3d1ebf1176p-1, 0x1.cf1c85d66c0b0p-1, 0x1.cf9553836851fp-1, 0x1.d00e3b04a380cp-1, 0x1.d0873c6bec528p-1,  \
      0x1.d10057cb22c0fp-1, 0x1.d1798d34381a2p-1, 0x1.d1f2dcb92f191p-1, 0x1.d26c466c1bfb4p-1, 0x1.d2e5ca5f249a6p-1,  \
      0x1.d35f68a480823p-1, 0x1.d3d9214e7908fp-1, 0x1.d452f46f6967dp-1, 0x1.d4cce219bed25p-1, 0x1.d546ea5ff88eap-1,  \
      0x1.d5c10d54a80f6p-1, 0x1.d63b4b0a7109fp-1, 0x1.d6b5a3940990fp-1, 0x1.d73017043a2d3p-1, 0x1.d7aaa56dddf5ep-1,  \
      0x1.d8254ee3e2aa6p-1, 0x1.d8a0137948cbap-1, 0x1.d91af34123b5ep-1, 0x1.d995ee4e99ba7p-1, 0x1.da1104b4e4394p-1,  \
      0x1.da8c36874fbb6p-1, 0x1.db0783d93c0dap-1, 0x1.db82ecbe1c5a8p-1, 0x1.dbfe71497744ep-1, 0x1.dc7a118ee7034p-1,  \
      0x1.dcf5cda2197acp-1, 0x1.dd71a596d0597p-1, 0x1.dded9980e1331p-1, 0x1.de69a974359bfp-1, 0x1.dee5d584cb44bp-1,  \
      0x1.df621dc6b4162p-1, 0x1.dfde824e164dfp-1, 0x1.e05b032f2c9a8p-1, 0x1.e0d7a07e46377p-1, 0x1.e1545a4fc70acp-1,  \
      0x1.e1d130b827c1bp-1, 0x1.e24e23cbf5ed2p-1, 0x1.e2cb339fd41ffp-1, 0x1.e34860487a0c0p-1, 0x1.e3c5a9dab49ffp-1,  \
      0x1.e443106b66250p-1, 0x1.e4c0940f865d9p-1, 0x1.e53e34dc22a35p-1, 0x1.e5bbf2e65e056p-1, 0x1.e639ce437167ep-1,  \
      0x1.e6b7c708aba28p-1, 0x1.e735dd4b719f9p-1, 0x1.e7b411213e7bdp-1, 0x1.e832629fa3a5dp-1, 0x1.e8b0d1dc48fdep-1,  \
      0x1.e92f5eececf66p-1, 0x1.e9ae09e764b3dp-1, 0x1.ea2cd2e19c2cdp-1, 0x1.eaabb9f1964cbp-1, 0x1.eb2abf2d6d128p-1,  \
      0x1.eba9e2ab51b31p-1, 0x1.ec2924818cbb0p-1, 0x1.eca884c67e2f1p-1, 0x1.ed2803909dafap-1, 0x1.eda7a0f67a99cp-1,  \
      0x1.ee275d0ebc2a5p-1, 0x1.eea737f021a06p-1, 0x1.ef2731b182601p-1, 0x1.efa74a69ce15cp-1, 0x1.f02782300cd9dp-1,  \
      0x1.f0a7d91b5f53fp-1, 0x1.f1284f42fedf8p-1, 0x1.f1a8e4be3daebp-1, 0x1.f22999a486f0cp-1, 0x1.f2aa6e0d5ef50p-1,  \
      0x1.f32b621063511p-1, 0x1.f3ac75c54b053p-1, 0x1.f42da943e6a22p-1, 0x1.f4aefca4206f8p-1, 0x1.f5306ffdfc90bp-1,  \
      0x1.f5b20369992c6p-1, 0x1.f633b6ff2e929p-1, 0x1.f6b58ad70f633p-1, 0x1.f7377f09a8b63p-1, 0x1.f7b993af82426p-1,  \
      0x1.f83bc8e13e853p-1, 0x1.f8be1eb79aeacp-1, 0x1.f940954b6ff6cp-1, 0x1.f9c32cb5b16cfp-1, 0x1.fa45e50f6e78ep-1,  \
      0x1.fac8be71d1d93p-1, 0x1.fb4bb8f62207cp-1, 0x1.fbced4b5c163fp-1, 0x1.fc5211ca2e5c8p-1, 0x1.fcd5704d039afp-1,  \
      0x1.fd58f057f82d9p-1, 0x1.fddc9204dfb24p-1, 0x1.fe60556daa834p-1, 0x1.fee43aac65e1dp-1, 0x1.ff6841db3c225p-1,  \
      0x1.ffec6b1474d9cp-1, 0x1.00385b393a847p+0, 0x1.007a9207dfa5ap+0, 0x1.00bcda037a015p+0, 0x1.00ff333968c31p+0,  \
      0x1.01419db71a283p+0, 0x1.0184198a0b96bp+0, 0x1.01c6a6bfc9b49p+0, 0x1.02094565f0802p+0, 0x1.024bf58a2b66ap+0,  \
      0x1.028eb73a355dap+0, 0x1.02d18a83d8f9ep+0, 0x1.03146f74f0883p+0, 0x1.0357661b66261p+0, 0x1.039a6e8533da4p+0,  \
      0x1.03dd88c063ad7p+0, 0x1.0420b4db0fc39p+0, 0x1.0463f2e362755p+0, 0x1.04a742e79668ep+0, 0x1.04eaa4f5f6ac4p+0,  \
      0x1.052e191cdecf0p+0, 0x1.05719f6abafc2p+0, 0x1.05b537ee08145p+0, 0x1.05f8e2b553c89p+0, 0x1.063c9fcf3cb52p+0,  \
      0x1.06806f4a727bap+0, 0x1.06c45135b5decp+0, 0x1.0708459fd8dd9p+0, 0x1.074c4c97beceep+0, 0x1.0790662c5c7ccp+0,  \
      0x1.07d4926cb840dp+0, 0x1.0818d167ea204p+0, 0x1.085d232d1be89p+0, 0x1.08a187cb894b6p+0, 0x1.08e5ff527ffc2p+0,  \
      0x1.092a89d15fccep+0, 0x1.096f27579acb4p+0, 0x1.09b3d7f4b55e8p+0, 0x1.09f89bb846650p+0, 0x1.0a3d72b1f7527p+0,  \
      0x1.0a825cf1844dap+0, 0x1.0ac75a86bc4fap+0, 0x1.0b0c6b8181423p+0, 0x1.0b518ff1c81e8p+0, 0x1.0b96c7e7990cep+0,  \
      0x1.0bdc13730f83fp+0, 0x1.0c2172a45a689p+0, 0x1.0c66e58bbc2dap+0, 0x1.0cac6c398af45p+0, 0x1.0cf206be30ad1p+0,  \
      0x1.0d37b52a2b37ep+0, 0x1.0d7d778e0c857p+0, 0x1.0dc34dfa7ab86p+0, 0x1.0e09388030477p+0, 0x1.0e4f372ffc1eap+0,  \
      0x1.0e954a1ac1c18p+0, 0x1.0edb7151796e2p+0, 0x1.0f21ace5303f0p+0, 0x1.0f67fce7084ecp+0, 0x1.0fae616838dadp+0,  \
      0x1.0ff4da7a0e67cp+0, 0x1.103b682deae42p+0, 0x1.10820a9545cd9p+0, 0x1.10c8c1c1ac551p+0, 0x1.110f8dc4c1832p+0,  \
      0x1.11566eb03e5d9p+0, 0x1.119d6495f20c9p+0, 0x1.11e46f87c200ap+0, 0x1.122b8f97aa182p+0, 0x1.1272c4d7bcc60p+0,  \
      0x1.12ba0f5a23387p+0, 0x1.13016f311d7f9p+0, 0x1.1348e46f02b53p+0, 0x1.13906f2641241p+0, 0x1.13d80f695e703p+0,  \
      0x1.141fc54af7bebp+0, 0x1.146790ddc1deep+0, 0x1.14af723489730p+0, 0x1.14f76962331a3p+0, 0x1.153f7679bb990p+0,  \
      0x1.1587998e3804fp+0, 0x1.15cfd2b2d5ed8p+0, 0x1.161821fadb87fp+0, 0x1.16608779a7da2p+0, 0x1.16a90342b2e5fp+0,  \
      0x1.16f195698dd56p+0, 0x1.173a3e01e326cp+0, 0x1.1782fd1f76d94p+0, 0x1.17cbd2d6269a5p+0, 0x1.1814bf39e9f2cp+0,  \
      0x1.185dc25ed274ep+0, 0x1.18a6dc590bea6p+0, 0x1.18f00d3cdc839p+0, 0x1.1939551ea505ep+0, 0x1.1982b412e0fb6p+0,  \
      0x1.19cc2a2e26e31p+0, 0x1.1a15b78528612p+0, 0x1.1a5f5c2cb26f1p+0, 0x1.1aa91839ad8dap+0, 0x1.1af2ebc11df5fp+0,  \
      0x1.1b3cd6d823cbcp+0, 0x1.1b86d993fb4fep+0, 0x1.1bd0f409fd132p+0, 0x1.1c1b264f9e29ep+0, 0x1.1c65707a705f8p+0,  \
      0x1.1cafd2a0226b0p+0, 0x1.1cfa4cd68023ep+0, 0x1.1d44df3372b75p+0, 0x1.1d8f89cd00dd8p+0, 0x1.1dda4cb94f109p+0,  \
      0x1.1e25280e9fc2ep+0, 0x1.1e701be353962p+0, 0x1.1ebb284de993ap+0, 0x1.1f064d64ff63bp+0, 0x1.1f518b3f51873p+0,  \
      0x1.1f9ce1f3bb8ffp+0, 0x1.1fe85199385bap+0, 0x1.2033da46e24cdp+0, 0x1.207f7c13f386fp+0, 0x1.20cb3717c6287p+0,  \
      0x1.21170b69d4881p+0, 0x1.2162f921b9703p+0, 0x1.21af0057305c9p+0, 0x1.21fb212215b7ap+0, 0x1.22475b9a6718ap+0,  \
      0x1.2293afd843828p+0, 0x1.22e01df3eba31p+0, 0x1.232ca605c2135p+0, 0x1.237948264b972p+0, 0x1.23c6046e2f5f7p+0,  \
      0x1.2412daf6374b0p+0, 0x1.245fcbd75029bp+0, 0x1.24acd72a89fe7p+0, 0x1.24f9fd091843bp+0, 0x1.25473d8c522f5p+0,  \
      0x1.259498cdb2f75p+0, 0x1.25e20ee6da17fp+0, 0x1.262f9ff18b994p+0, 0x1.267d4c07b0566p+0, 0x1.26cb134356451p+0,  \
      0x1.2718f5beb0bd9p+0, 0x1.2766f39418c42p+0, 0x1.27b50cde0d524p+0, 0x1.280341b733a11p+0, 0x1.2851923a57749p+0,  \
      0x1.289ffe826b674p+0, 0x1.28ee86aa89368p+0, 0x1.293d2acdf2102p+0, 0x1.298beb080ee04p+0, 0x1.29dac77470a03p+0,  \
      0x1.2a29c02ed0a5cp+0, 0x1.2a78d55310f3bp+0, 0x1.2ac806fd3c8aep+0, 0x1.2b17554987bc4p+0, 0x1.2b66c054507b1p+0,  \
      0x1.2bb6483a1eb13p+0, 0x1.2c05ed17a492cp+0, 0x1.2c55af09bef3bp+0, 0x1.2ca58e2d759d9p+0, 0x1.2cf58a9ffba6cp+0,  \
      0x1.2d45a47eafca0p+0, 0x1.2d95dbe71cbecp+0, 0x1.2de630f6f9937p+0, 0x1.2e36a3cc2a070p+0, 0x1.2e873484bee4cp+0,  \
      0x1.2ed7e33ef660ap+0, 0x1.2f28b0193c73ep+0, 0x1.2f799b322b3bap+0, 0x1.2fcaa4a88b57dp+0, 0x1.301bcc9b544b7p+0,  \
      0x1.306d1329acdcbp+0, 0x1.30be7872eb782p+0, 0x1.310ffc969692dp+0, 0x1.31619fb4650ecp+0, 0x1.31b361ec3e9f9p+0,  \
      0x1.3205435e3c30dp+0, 0x1.3257442aa84d3p+0, 0x1.32a96471ff866p+0, 0x1.32fba454f0de8p+0, 0x1.334e03f45e329p+0,  \
      0x1.33a083715ca5ap+0, 0x1.33f322ed350dbp+0, 0x1.3445e28964612p+0, 0x1.3498c2679c25bp+0, 0x1.34ebc2a9c2e06p+0,  \
      0x1.353ee371f486cp+0, 0x1.359224e282f19p+0, 0x1.35e5871df64f7p+0, 0x1.36390a470d9adp+0, 0x1.368cae80bf0f3p+0,  \
      0x1.36e073ee38a0ep+0, 0x1.37345ab2e074ep+0, 0x1.378862f2555bdp+0, 0x1.37dc8cd06f4c2p+0, 0x1.3830d8713fdecp+0,  \
      0x1.388545f912cd5p+0, 0x1.38d9d58c6e70fp+0, 0x1.392e87501442cp+0, 0x1.39835b69015dcp+0, 0x1.39d851fc6f02ap+0,  \
      0x1.3a2d6b2fd31bcp+0, 0x1.3a82a728e0c40p+0, 0x1.3ad8060d88cdbp+0, 0x1.3b2d8803fa4cbp+0, 0x1.3b832d32a3201p+0,  \
      0x1.3bd8f5c0307eep+0, 0x1.3c2ee1d38f858p+0, 0x1.3c84f193edc52p+0, 0x1.3cdb2528b9d49p+0, 0x1.3d317cb9a3e23p+0,  \
      0x1.3d87f86e9e491p+0, 0x1.3dde986fde252p+0, 0x1.3e355ce5dbec3p+0, 0x1.3e8c45f954060p+0, 0x1.3ee353d347670p+0,  \
      0x1.3f3a869cfc2d4p+0, 0x1.3f91de7ffe3edp+0, 0x1.3fe95ba61fe93p+0, 0x1.4040fe397a839p+0, 0x1.4098c6646f12ap+0,  \
      0x1.40f0b451a6ee3p+0, 0x1.4148c82c1467dp+0, 0x1.41a1021ef3757p+0, 0x1.41f96255ca5bap+0, 0x1.4251e8fc6a5b3p+0,  \
      0x1.42aa963ef060dp+0, 0x1.43036a49c5b5bp+0, 0x1.435c6549a0b30p+0, 0x1.43b5876b85778p+0, 0x1.440ed0dcc69f1p+0,  \
      0x1.446841cb05fbap+0, 0x1.44c1da6435521p+0, 0x1.451b9ad697170p+0, 0x1.45758350bf303p+0, 0x1.45cf940193b59p+0,  \
      0x1.4629cd184db78p+0, 0x1.46842ec47a04ep+0, 0x1.46deb935f9f47p+0, 0x1.47396c9d04313p+0, 0x1.4794492a25887p+0,  \
      0x1.47ef4f0e41ba2p+0, 0x1.484a7e7a944c5p+0, 0x1.48a5d7a0b160fp+0, 0x1.49015ab2868dbp+0, 0x1.495d07e25bb72p+0,  \
      0x1.49b8df62d3ee7p+0, 0x1.4a14e166ee511p+0, 0x1.4a710e2206ebfp+0, 0x1.4acd65c7d7a12p+0, 0x1.4b29e88c790fep+0,  \
      0x1.4b8696a46380dp+0, 0x1.4be370446fd2ep+0, 0x1.4c4075a1d86d6p+0, 0x1.4c9da6f23a33bp+0, 0x1.4cfb046b957c2p+0,  \
      0x1.4d588e444f0a4p+0, 0x1.4db644b3310c4p+0, 0x1.4e1427ef6c1adp+0, 0x1.4e723830983d6p+0, 0x1.4ed075aeb5efep+0,  \
      0x1.4f2ee0a22f2e2p+0, 0x1.4f8d7943d8800p+0, 0x1.4fec3fccf20b0p+0, 0x1.504b347728a69p+0, 0x1.50aa577c96f2fp+0,  \
      0x1.5109a917c675cp+0, 0x1.51692983b0b7dp+0, 0x1.51c8d8fbc0682p+0, 0x1.5228b7bbd2823p+0, 0x1.5288c60037781p+0,  \
      0x1.52e90405b45ffp+0, 0x1.5349720984265p+0, 0x1.53aa104958c33p+0, 0x1.540adf035c745p+0, 0x1.546bde7632facp+0,  \
      0x1.54cd0ee0fadcap+0, 0x1.552e70834eabap+0, 0x1.5590039d464efp+0, 0x1.55f1c86f7852ep+0, 0x1.5653bf3afb3a8p+0,  \
      0x1.56b5e84166d93p+0, 0x1.571843c4d5acdp+0, 0x1.577ad207e6401p+0, 0x1.57dd934dbc8f6p+0, 0x1.584087da03731p+0,  \
      0x1.58a3aff0ee0eap+0, 0x1.59070bd739447p+0, 0x1.596a9bd22d2f3p+0, 0x1.59ce60279ea01p+0, 0x1.5a32591df0a17p+0,  \
      0x1.5a9686fc16002p+0, 0x1.5afaea0992d8cp+0, 0x1.5b5f828e7e2b7p+0, 0x1.5bc450d383743p+0, 0x1.5c295521e449ap+0,  \
      0x1.5c8e8fc37a013p+0, 0x1.5cf40102b7592p+0, 0x1.5d59a92aaa27bp+0, 0x1.5dbf8886fd11cp+0, 0x1.5e259f63f9465p+0,  \
      0x1.5e8bee0e8840ap+0, 0x1.5ef274d43590cp+0, 0x1.5f59340330aa3p+0, 0x1.5fc02bea4eb93p+0, 0x1.60275cd90c7eep+0,  \
      0x1.608ec71f9033fp+0, 0x1.60f66b0eab71dp+0, 0x1.615e48f7dd239p+0, 0x1.61c6612d537d8p+0, 0x1.622eb401edfbbp+0,  \
      0x1.629741c93f684p+0, 0x1.63000ad78fe93p+0, 0x1.63690f81df151p+0, 0x1.63d2501de6108p+0, 0x1.643bcd0219b2ep+0,  \
      0x1.64a58685acb2bp+0, 0x1.650f7d0091db1p+0, 0x1.6579b0cb7e489p+0, 0x1.65e4223febaf4p+0, 0x1.664ed1b81aa88p+0,  \
      0x1.66b9bf8f150a4p+0, 0x1.6724ec20b0470p+0, 0x1.679057c98fd65p+0, 0x1.67fc02e727a78p+0, 0x1.6867edd7be9c8p+0,  \
      0x1.68d418fa710fcp+0, 0x1.694084af33621p+0, 0x1.69ad3156d4947p+0, 0x1.6a1a1f5300e9bp+0, 0x1.6a874f0644948p+0,  \
      0x1.6af4c0d40e6e1p+0, 0x1.6b627520b2b90p+0, 0x1.6bd06c516dee1p+0, 0x1.6c3ea6cc6793ep+0, 0x1.6cad24f8b5230p+0,  \
      0x1.6d1be73e5cf3cp+0, 0x1.6d8aee065939cp+0, 0x1.6dfa39ba9b094p+0, 0x1.6e69cac60d6a5p+0, 0x1.6ed9a19498775p+0,  \
      0x1.6f49be9324886p+0, 0x1.6fba222f9d6c3p+0, 0x1.702accd8f5ac3p+0, 0x1.709bbeff29e03p+0, 0x1.710cf913440e8p+0,  \
      0x1.717e7b875f196p+0, 0x1.71f046ceaa3c0p+0, 0x1.72625b5d6c946p+0, 0x1.72d4b9a908bcbp+0, 0x1.7347622800744p+0,  \
      0x1.73ba5551f855cp+0, 0x1.742d939fbb9f1p+0, 0x1.74a11d8b40077p+0, 0x1.7514f38fa9a72p+0, 0x1.758916294eeedp+0,  \
      0x1.75fd85d5bcaf2p+0, 0x1.76724313ba32ep+0, 0x1.76e74e634d69cp+0, 0x1.775ca845bf253p+0, 0x1.77d2513d9f670p+0,  \
      0x1.784849cec9c34p+0, 0x1.78be927e69d58p+0, 0x1.79352bd2ffc71p+0, 0x1.79ac165464ebcp+0, 0x1.7a23528bd0725p+0,  \
      0x1.7a9ae103dc272p+0, 0x1.7b12c248894ebp+0, 0x1.7b8af6e74593dp+0, 0x1.7c037f6ef00d2p+0, 0x1.7c7c5c6fde572p+0,  \
      0x1.7cf58e7be1c65p+0, 0x1.7d6f16264cb0cp+0, 0x1.7de8f403f7ce3p+0, 0x1.7e6328ab47b16p+0, 0x1.7eddb4b4325a8p+0,  \
      0x1.7f5898b844e1cp+0, 0x1.7fd3d552a93dap+0, 0x1.804f6b202c211p+0, 0x1.80cb5abf42f6dp+0, 0x1.8147a4d011f80p+0,  \
      0x1.81c449f4725e2p+0, 0x1.82414acff8b1dp+0, 0x1.82bea807fb388p+0, 0x1.833c6243987e3p+0, 0x1.83ba7a2bbdfffp+0,  \
      0x1.8438f06b2ef3dp+0, 0x1.84b7c5ae8b32fp+0, 0x1.8536faa45642fp+0, 0x1.85b68ffcfe816p+0, 0x1.8636866ae4728p+0,  \
      0x1.86b6dea262315p+0, 0x1.87379959d3059p+0, 0x1.87b8b7499b1cbp+0, 0x1.883a392c2f6a0p+0, 0x1.88bc1fbe1dabcp+0,  \
      0x1.893e6bbe14996p+0, 0x1.89c11decec379p+0, 0x1.8a44370dae588p+0, 0x1.8ac7b7e59f439p+0, 0x1.8b4ba13c4689ep+0,  \
      0x1.8bcff3db78067p+0, 0x1.8c54b08f5d0b9p+0, 0x1.8cd9d8267dbe1p+0, 0x1.8d5f6b71caa16p+0, 0x1.8de56b44a6522p+0,  \
      0x1.8e6bd874ef741p+0, 0x1.8ef2b3db0ad1fp+0, 0x1.8f79fe51edb22p+0, 0x1.9001b8b728603p+0, 0x1.9089e3eaf0ed9p+0,  \
      0x1.911280d02e292p+0, 0x1.919b904c82d27p+0, 0x1.9225134859055p+0, 0x1.92af0aaeede39p+0, 0x1.9339776e5d7bcp+0,  \
      0x1.93c45a77aeee8p+0, 0x1.944fb4bee0d74p+0, 0x1.94db873af5f48p+0, 0x1.9567d2e60216cp+0, 0x1.95f498bd37543p+0,  \
      0x1.9681d9c0f3845p+0, 0x1.970f96f4ce062p+0, 0x1.979dd15fa5d08p+0, 0x1.982c8a0bafd11p+0, 0x1.98bbc206859acp+0,  \
      0x1.994b7a613464dp+0, 0x1.99dbb4304c5eap+0, 0x1.9a6c708bf0598p+0, 0x1.9afdb08fe5ca6p+0, 0x1.9b8f755ba525bp+0,  \
      0x1.9c21c0126a999p+0, 0x1.9cb491db47260p+0, 0x1.9d47ebe132188p+0, 0x1.9ddbcf531aec3p+0, 0x1.9e703d63fb8fcp+0,  \
      0x1.9f05374aeb195p+0, 0x1.9f9abe4330e36p+0, 0x1.a030d38c581dep+0, 0x1.a0c7786a43cfcp+0, 0x1.a15eae2543512p+0,  \
      0x1.a1f6760a273dfp+0, 0x1.a28ed16a56e7bp+0, 0x1.a327c19be646bp+0, 0x1.a3c147f9ac6fdp+0, 0x1.a45b65e35a94ep+0,  \
      0x1.a4f61cbd938e1p+0, 0x1.a5916df203f72p+0, 0x1.a62d5aef7addbp+0, 0x1.a6c9e52a030c0p+0, 0x1.a7670e1afcee5p+0,  \
      0x1.a804d741391b7p+0, 0x1.a8a3422113840p+0, 0x1.a94250448f4e2p+0, 0x1.a9e2033b735fcp+0, 0x1.aa825c9b67a24p+0,  \
      0x1.ab235e0013002p+0, 0x1.abc5090b3a233p+0, 0x1.ac675f64defc4p+0, 0x1.ad0a62bb61165p+0, 0x1.adae14c39ebf3p+0,  \
      0x1.ae5277391708bp+0, 0x1.aef78bde0cac5p+0, 0x1.af9d547ba9d6bp+0, 0x1.b043d2e224e20p+0, 0x1.b0eb08e8e608ap+0,  \
      0x1.b192f86eae14ep+0, 0x1.b23ba359be19fp+0, 0x1.b2e50b98003aep+0, 0x1.b38f331f318acp+0, 0x1.b43a1bed0d0d2p+0,  \
      0x1.b4e5c80777e2dp+0, 0x1.b592397caeaafp+0, 0x1.b63f726374227p+0, 0x1.b6ed74db410d0p+0, 0x1.b79c430c75743p+0,  \
      0x1.b84bdf288b446p+0, 0x1.b8fc4b6a4a57cp+0, 0x1.b9ad8a15fdf7bp+0, 0x1.ba5f9d79abe51p+0, 0x1.bb1287ed4cf1bp+0,  \
      0x1.bbc64bd3073c0p+0, 0x1.bc7aeb976a183p+0, 0x1.bd3069b1abb85p+0, 0x1.bde6c8a3e8a20p+0, 0x1.be9e0afb6503ap+0,  \
      0x1.bf563350cff63p+0, 0x1.c00f444888c3cp+0, 0x1.c0c94092e63eap+0, 0x1.c1842aec80411p+0, 0x1.c240061e7b678p+0,  \
      0x1.c2fcd4fed71bep+0, 0x1.c3ba9a70be059p+0, 0x1.c4795964d8f71p+0, 0x1.c53914d9a4705p+0, 0x1.c5f9cfdbc8d02p+0,  \
      0x1.c6bb8d86754a3p+0, 0x1.c77e5103bdc3bp+0, 0x1.c8421d8cfbad5p+0, 0x1.c906f66b31fa5p+0, 0x1.c9ccdef774557p+0,  \
      0x1.ca93da9b51b05p+0, 0x1.cb5becd14253ep+0, 0x1.cc25192519917p+0, 0x1.ccef63347b3bdp+0, 0x1.cdbaceaf55101p+0,  \
      0x1.ce875f585c336p+0, 0x1.cf5519058ef64p+0, 0x1.d023ffa0bb03ap+0, 0x1.d0f417280830bp+0, 0x1.d1c563ae881b5p+0,  \
      0x1.d297e95ccacb3p+0, 0x1.d36bac71788dap+0, 0x1.d440b141f1439p+0, 0x1.d516fc3af15dep+0, 0x1.d5ee91e13cc83p+0,  \
      0x1.d6c776d25002ap+0, 0x1.d7a1afc517b04p+0, 0x1.d87d418aaee60p+0, 0x1.d95a310f2482dp+0, 0x1.da38835a47e54p+0,  \
      0x1.db183d907d52dp+0, 0x1.dbf964f39a6a6p+0, 0x1.dcdbfee3cb020p+0, 0x1.ddc010e07ed0cp+0, 0x1.dea5a08960523p+0,  \
      0x1.df8cb39f554e3p+0, 0x1.e0755005897efp+0, 0x1.e15f7bc283cb4p+0, 0x1.e24b3d01469dap+0, 0x1.e3389a127bdeep+0,  \
      0x1.e427996dad269p+0, 0x1.e51841b288be6p+0, 0x1.e60a99aa34180p+0, 0x1.e6fea848ac672p+0, 0x1.e7f474ae3613ep+0,  \
      0x1.e8ec0628dbc84p+0, 0x1.e9e56435fdea8p+0, 0x1.eae09683f359ep+0, 0x1.ebdda4f3bc58fp+0, 0x1.ecdc979ac89ddp+0,  \
      0x1.eddd76c4d1892p+0, 0x1.eee04af5c9a02p+0, 0x1.efe51cebe26d6p+0, 0x1.f0ebf5a1aa074p+0, 0x1.f1f4de504188cp+0,  \
      0x1.f2ffe071ade63p+0, 0x1.f40d05c344971p+0, 0x1.f51c584835aeep+0, 0x1.f62de24c35181p+0, 0x1.f741ae6644bd3p+0,  \
      0x1.f857c77ba1947p+0, 0x1.f97038c2d59e6p+0, 0x1.fa8b0dc6f10e0p+0, 0x1.fba8526aecfc6p+0, 0x1.fcc812ed3a31bp+0,  \
      0x1.fdea5beb7ebeep+0, 0x1.ff0f3a6685554p+0, 0x1.001b5de330c0cp+1, 0x1.00b076ef66153p+1, 0x1.0146ef79ddfb9p+1,  \
      0x1.01decedf1ec30p+1, 0x1.02781cb8c7d56p+1, 0x1.0312e0e044204p+1, 0x1.03af2371a33aap+1, 0x1.044cecce9bedcp+1,  \
      0x1.04ec45a1bafddp+1, 0x1.058d36e1c14b0p+1, 0x1.062fc9d534a41p+1, 0x1.06d4081626edap+1, 0x1.0779fb9637900p+1,  \
      0x1.0821aea2d370ep+1, 0x1.08cb2be9b8218p+1, 0x1.09767e7dbf517p+1, 0x1.0a23b1dbf8085p+1, 0x1.0ad2d1f113aaap+1,  \
      0x1.0b83eb1f2d58bp+1, 0x1.0c370a43f2d58p+1, 0x1.0cec3cbf36cb8p+1, 0x1.0da39079f50a9p+1, 0x1.0e5d13edd22aep+1,  \
      0x1.0f18d62d20ed5p+1, 0x1.0fd6e6eb78bebp+1, 0x1.10975686e9e10p+1, 0x1.115a3611dd0f3p+1, 0x1.121f975dadd87p+1,  \
      0x1.12e78d0610916p+1, 0x1.13b22a7d5685cp+1, 0x1.147f8419a51f3p+1, 0x1.154faf2336fd6p+1, 0x1.1622c1e3c0978p+1,  \
      0x1.16f8d3b714e4ep+1, 0x1.17d1fd1d29dffp+1, 0x1.18ae57cda0781p+1, 0x1.198dfeccf7cd1p+1, 0x1.1a710e8398759p+1,  \
      0x1.1b57a4d6ea1d6p+1, 0x1.1c41e144ac338p+1, 0x1.1d2fe500d1b0dp+1, 0x1.1e21d316286fep+1, 0x1.1f17d08a1e4d7p+1,  \
      0x1.20120484018c2p+1, 0x1.211098782703fp+1, 0x1.2213b8576fdb9p+1, 0x1.231b92c3ba460p+1, 0x1.24285949dd7c6p+1,  \
      0x1.253a40a1e98cfp+1, 0x1.265180f6804b2p+1, 0x1.276e56343e9b3p+1, 0x1.289100625593fp+1, 0x1.29b9c405a2e28p+1,  \
      0x1.2ae8ea8fd12dcp+1, 0x1.2c1ec2dc4e029p+1, 0x1.2d5ba1bd35cf7p+1, 0x1.2e9fe29abaef9p+1, 0x1.2febe828071b9p+1,  \
      0x1.31401d312c2bbp+1, 0x1.329cf58671158p+1, 0x1.3402ef0a2b839p+1, 0x1.357292e7715f5p+1, 0x1.36ec76f94fbedp+1,  \
      0x1.38713f6bf2c9cp+1, 0x1.3a01a0a3602aap+1, 0x1.3b9e617638f83p+1, 0x1.3d485dce9be20p+1, 0x1.3f0089c7fb009p+1,  \
      0x1.40c7f566eb88dp+1, 0x1.429fd11029fe9p+1, 0x1.448972ef06707p+1, 0x1.46865d8a43065p+1, 0x1.489847dabeeefp+1,  \
      0x1.4ac1275372feap+1, 0x1.4d033c71e5970p+1, 0x1.4f6122a6d967bp+1, 0x1.51dde4b9434dep+1, 0x1.547d173f6ec88p+1,  \
      0x1.5742fb82793bep+1, 0x1.5a34ae3d6eb2dp+1, 0x1.5d58676e30b7dp+1, 0x1.60b5d353018bfp+1, 0x1.6456919431845p+1,  \
      0x1.6846f032e3e88p+1, 0x1.6c9707a3e4fcbp+1, 0x1.715c7c1c88ccbp+1, 0x1.76b5674b93d99p+1, 0x1.7ccd7ab02a213p+1,  \
      0x1.83e7c561d08a8p+1, 0x1.8c73502ae34eep+1, 0x1.973d5862e57fep+1, 0x1.a60a6e7a2afbbp+1, 0x1.be596d62759d4p+1

#if defined(__CUDACC__)
__device__ const double kNormalQuantilesDevice[kNormalBins - 1] = {KHIVE_NORMAL_QUANTILES};
#endif
inline constexpr double kNormalQuantilesHost[kNormalBins - 1] = {KHIVE_NORMAL_QUANTILES};

// q(j) = Phi^-1(j / 4096) for 1 <= j <= 4095.
KHIVE_HD double normal_quantile(int j) {
#if defined(__CUDA_ARCH__)
  return kNormalQuantilesDevice[j - 1];
#else
  return kNormalQuantilesHost[j - 1];
#endif
}

}  // namespace khive::detail
