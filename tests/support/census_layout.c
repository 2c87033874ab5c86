/* census_layout.c - prints every field offset and size of census.h's
 * structs as the C compiler lays them out, for tests/python to compare with
 * the ctypes declarations of python/kvmstat/_census.py. */
#include <stddef.h>
#include <stdio.h>

#include "census.h"

#define F(s, f) printf("%s %s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))
#define S(s) printf("%s - 0 %zu\n", #s, sizeof(struct s))

int
main(void)
{
	S(kvs_counter);
	F(kvs_counter, group);
	F(kvs_counter, name);
	F(kvs_counter, key);
	F(kvs_counter, value);
	F(kvs_counter, unit);
	F(kvs_counter, flags);
	F(kvs_counter, note);
	S(kvs_pzone);
	F(kvs_pzone, node);
	F(kvs_pzone, name);
	F(kvs_pzone, index);
	F(kvs_pzone, kaddr);
	F(kvs_pzone, populated);
	F(kvs_pzone, norders);
	F(kvs_pzone, free);
	F(kvs_pzone, npools);
	F(kvs_pzone, pool_name);
	F(kvs_pzone, pool_free);
	F(kvs_pzone, free_pages);
	F(kvs_pzone, wmark_min);
	F(kvs_pzone, wmark_low);
	F(kvs_pzone, wmark_high);
	F(kvs_pzone, wmark_boost);
	F(kvs_pzone, spanned);
	F(kvs_pzone, present);
	F(kvs_pzone, managed);
	F(kvs_pzone, cma);
	F(kvs_pzone, start_pfn);
	F(kvs_pzone, nprotection);
	F(kvs_pzone, protection);
	F(kvs_pzone, stat);
	F(kvs_pzone, nstat);
	F(kvs_pzone, node_stat);
	F(kvs_pzone, nnode_stat);
	F(kvs_pzone, unreclaimable);
	S(kvs_pzone_pcp);
	F(kvs_pzone_pcp, cpu);
	F(kvs_pzone_pcp, count);
	F(kvs_pzone_pcp, high);
	F(kvs_pzone_pcp, batch);
	F(kvs_pzone_pcp, stat_threshold);
	F(kvs_pzone, pcp);
	F(kvs_pzone, npcp);
	F(kvs_pzone, flags);
	F(kvs_pzone, note);
	S(kvs_varea);
	F(kvs_varea, start);
	F(kvs_varea, end);
	F(kvs_varea, size);
	F(kvs_varea, caller);
	F(kvs_varea, caller_sym);
	F(kvs_varea, nr_pages);
	F(kvs_varea, phys_addr);
	F(kvs_varea, kaddr);
	F(kvs_varea, vm_flags);
	F(kvs_varea, flags);
	F(kvs_varea, cflags);
	F(kvs_varea, note);
	S(kvs_arena);
	F(kvs_arena, name);
	F(kvs_arena, kaddr);
	F(kvs_arena, quantum);
	F(kvs_arena, size);
	F(kvs_arena, inuse);
	F(kvs_arena, free);
	F(kvs_arena, cflags);
	F(kvs_arena, note);
	S(kvs_slab_object);
	F(kvs_slab_object, addr);
	F(kvs_slab_object, slab);
	F(kvs_slab_object, index);
	F(kvs_slab_object, state);
	F(kvs_slab_object, cpu);
	F(kvs_slab_object, node);
	S(kvs_whatis);
	F(kvs_whatis, addr);
	F(kvs_whatis, kind);
	F(kvs_whatis, cache);
	F(kvs_whatis, cache_kaddr);
	F(kvs_whatis, object);
	F(kvs_whatis, offset);
	F(kvs_whatis, objsize);
	F(kvs_whatis, obj_index);
	F(kvs_whatis, state);
	F(kvs_whatis, cpu);
	F(kvs_whatis, alloc_caller);
	F(kvs_whatis, free_caller);
	F(kvs_whatis, pfn);
	F(kvs_whatis, page);
	F(kvs_whatis, page_flags);
	F(kvs_whatis, page_flags_str);
	F(kvs_whatis, mapping);
	F(kvs_whatis, order);
	F(kvs_whatis, head);
	F(kvs_whatis, area_start);
	F(kvs_whatis, area_end);
	F(kvs_whatis, area_caller);
	F(kvs_whatis, symbol);
	F(kvs_whatis, pid);
	F(kvs_whatis, comm);
	F(kvs_whatis, task);
	F(kvs_whatis, note);
	F(kvs_whatis, malloc_zone);
	F(kvs_whatis, tid);
	F(kvs_whatis, map_name);
	F(kvs_whatis, map_entry);
	F(kvs_whatis, map_object);
	F(kvs_whatis, map_offset);
	F(kvs_whatis, map_eflags);
	F(kvs_whatis, map_prot);
	F(kvs_whatis, map_maxprot);
	F(kvs_whatis, map_prev);
	F(kvs_whatis, map_next);
	return 0;
}
