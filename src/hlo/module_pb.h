/*
 * HloModuleProto -> the IR of include/ulpscope/hlo.h (src/hlo/module_pb.c),
 * shared with the snapshot reader.
 */
#ifndef USC_MODULE_PB_H
#define USC_MODULE_PB_H

#include "ulpscope/xla_proto.h"

#include "proto/pb_door.h"

/*
 * Converts m into a new file holding one module.  file and path
 * ("HloSnapshot.hlo.hlo_module") name it in messages.
 */
usc_status usc__hlo_from_pb(const Xla__HloModuleProto *m, const char *file,
			    const char *path, usc_hlo_file **out,
			    usc_error *err);

#endif /* USC_MODULE_PB_H */
