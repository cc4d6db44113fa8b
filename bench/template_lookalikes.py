# ruff: noqa: E501  (the templates and name pools are data, one line each)
"""Template look-alikes: the same notice about another company, person or place, where only
the name differs. Each pair's second text must stay unique; the report says how many were merged.

    .venv/bin/python bench/template_lookalikes.py [--set tuned|held_out] [--seed 1] [--per-template 30]
                                                  [--json RESULTS.json] [-v]

Two sets of hand-written government-notice templates and name pools: ``tuned``, the set the name
rules of ``neardup.text.entities`` (a company's legal form, a person's title, a known name's
suffix) were developed against, and ``held_out``, written after those rules were fixed, with other
templates and other names. Read the held-out figure. Names are drawn at random (``--seed``), as
the first and the second text of each pair. Each pair is decided by its own library
``Deduplicator`` (memory store): the first text, then the second, which is merged if it comes
out a duplicate. One ``Deduplicator`` for every pair counted only a second text merged with its
own first: a first text already merged with another pair's (about a third of the people in a
template) left its pair uncounted, and a second text merged with another pair's first was not
counted either; that undercounted the merges several times over (docs/measurements.md).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import emit

from neardup import Deduplicator, Status


def tuned(rng: random.Random) -> tuple[dict[str, list[str]], dict[str, Callable[[], str]]]:
    """The templates and name generators the rules were developed against."""
    cities = ["深圳市", "广州市", "杭州市", "北京", "上海", "成都市", "武汉市", "南京市", "苏州市", "长沙市", "郑州市", "西安市", "青岛市", "厦门市", "宁波市", "合肥市", "福州市", "济南市", "昆明市", "南宁市"]
    brands = ["华星", "恒信", "金鹰", "宏达", "鼎盛", "天宇", "蓝海", "盛世", "永和", "瑞丰", "嘉禾", "中天", "海纳", "新元", "博雅", "汇通", "富康", "东方红", "凯旋", "星河", "长虹", "安泰", "顺达", "锦程", "鸿运", "德润", "佳美", "华腾", "银河", "雅居"]
    inds = ["科技", "电子", "贸易", "建设", "实业", "医药", "物流", "食品", "环保", "能源", "投资", "文化传媒", "信息技术", "建筑工程", "餐饮管理"]
    forms = ["有限公司", "股份有限公司", "有限责任公司", "集团有限公司"]
    def company():
        return rng.choice(cities) + rng.choice(brands) + rng.choice(inds) + rng.choice(forms)
    surn = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
    given = ["伟", "芳", "娜", "敏", "静", "丽", "强", "磊", "军", "洋", "勇", "艳", "杰", "娟", "涛", "明", "超", "秀英", "霞", "平", "刚", "桂英", "建华", "文", "华", "志强", "海燕", "玉兰", "建国", "国强", "晓东", "春梅", "宏伟", "俊杰", "子涵", "雨欣", "浩然", "思远", "立新", "卫东"]
    def person():
        return rng.choice(surn) + rng.choice(given)
    counties = ["临安", "桐庐", "建德", "淳安", "富阳", "余杭", "萧山", "海宁", "桐乡", "德清", "长兴", "安吉", "嵊州", "新昌", "诸暨", "上虞", "龙泉", "庆元", "遂昌", "松阳", "云和", "景宁", "缙云", "青田", "永嘉", "平阳", "苍南", "文成", "泰顺", "瑞安", "乐清"]
    def place():
        return rng.choice(counties) + rng.choice(["县", "市", "区"])
    T = {
     "company": [
      "关于准予{x}设立登记的通知。根据《中华人民共和国公司法》和有关规定，经审查，{x}提交的设立登记申请材料齐全，符合法定形式，本局决定准予登记。请你单位自收到本通知之日起三十日内领取营业执照，逾期未领取的，视为放弃。特此通知。",
      "行政处罚决定书。当事人：{x}。经查，当事人在其经营场所内销售不符合食品安全标准的食品，违反了《中华人民共和国食品安全法》第三十四条的规定。依据《中华人民共和国食品安全法》第一百二十四条的规定，本局决定对当事人作出如下行政处罚：没收违法所得，并处罚款。当事人应当自收到本决定书之日起十五日内缴纳罚款。",
      "关于{x}首次公开发行股票并上市的公告。经中国证券监督管理委员会核准，{x}首次公开发行人民币普通股股票的申请已获通过。本次发行采用网下向符合条件的投资者询价配售和网上向持有深圳市场非限售A股股份市值的社会公众投资者定价发行相结合的方式进行。敬请广大投资者关注。",
      "中标结果公告。项目名称：城市道路改造工程。经评标委员会评审，确定{x}为中标人。中标金额以合同为准。公示期为三个工作日，各投标人如对中标结果有异议，可在公示期内以书面形式向招标人提出。招标人：市政工程管理处。",
     ],
     "person": [
      "关于{x}同志任职的通知。经研究决定，任命{x}同志为市发展和改革委员会副主任，试用期一年。免去{x}同志的市统计局副局长职务。以上同志的任职时间从发文之日起计算。特此通知。",
      "任前公示。根据干部选拔任用工作的有关规定，经组织考察，拟提拔{x}同志担任县人民政府办公室主任。公示期间，如对公示对象有异议，可通过来信、来电、来访等方式向县委组织部反映。反映问题要实事求是，客观公正。",
      "讣告。中国共产党优秀党员、原市人大常委会副主任{x}同志，因病医治无效，于近日在本市逝世。{x}同志一生忠诚于党的事业，为本市经济社会发展作出了重要贡献。遗体告别仪式定于本周六上午在市殡仪馆举行。",
     ],
     "place": [
      "关于同意{x}撤乡设镇的批复。你县关于撤乡设镇的请示收悉。经研究，同意{x}撤销所辖部分乡建制设立镇，镇人民政府驻地不变。撤乡设镇后，要切实加强领导，认真做好有关工作，确保社会稳定。",
      "{x}气象台发布暴雨橙色预警信号。受强对流天气影响，预计未来六小时内{x}大部分地区将出现暴雨，局部大暴雨，并伴有雷电和短时大风。请有关单位和人员做好防范工作，注意防范山洪、地质灾害。",
      "关于公布{x}第一批历史文化名村名单的通知。为加强历史文化遗产保护，经专家评审和社会公示，现将{x}第一批历史文化名村名单予以公布。各乡镇要加强对名村的保护和管理，严禁拆除历史建筑。",
     ],
    }
    return T, {"company": company, "person": person, "place": place}


def held_out(rng: random.Random) -> tuple[dict[str, list[str]], dict[str, Callable[[], str]]]:
    """Templates and names written after the rules were fixed."""
    prov = ["河北省", "山西省", "辽宁省", "吉林省", "江苏省", "浙江省", "安徽省", "福建省", "江西省", "山东省", "河南省", "湖北省", "湖南省", "广东省", "海南省", "四川省", "贵州省", "云南省", "陕西省", "甘肃省"]
    brands = ["金源", "华信", "远航", "宏图", "新华联", "九州", "恒通", "明辉", "正泰", "华宇", "金桥", "大地", "同创", "联创", "天成", "卓越", "力拓", "东升", "光明", "兴业"]
    inds = ["置业", "制药", "纺织", "机械", "化工", "汽车销售", "农业开发", "物业管理", "网络科技", "旅游开发"]
    def company():
        return rng.choice(["", rng.choice(prov)]) + rng.choice(brands) + rng.choice(inds) + rng.choice(["有限公司", "股份有限公司"])
    surn = "赵钱孙李周吴郑王冯陈褚卫蒋沈韩杨朱秦尤许何吕施张孔曹严华金魏陶姜戚谢邹喻柏水窦章云苏潘葛奚范彭郎鲁韦昌马苗凤花方俞任袁柳鲍史唐费廉岑薛雷贺倪汤"
    given = ["志刚", "秀兰", "红梅", "永强", "丽华", "建军", "海涛", "晓燕", "德明", "玉珍", "国庆", "少华", "文斌", "美玲", "新民", "振华", "嘉欣", "一鸣", "子轩", "梓涵", "军", "燕", "斌", "鹏", "琳"]
    def person():
        return rng.choice(surn) + rng.choice(given)
    towns = ["城关镇", "新塘镇", "石桥镇", "龙泉镇", "白沙镇", "黄土岭乡", "青山乡", "马坪乡", "三河镇", "杨柳镇", "大湾镇", "河口镇", "梅林镇", "清水乡", "花园乡"]
    T = {
     "company": [
      "关于对{x}安全生产违法行为的处罚公告。经查，{x}未按规定对从业人员进行安全生产教育和培训，违反了《中华人民共和国安全生产法》的规定。根据相关规定，责令其限期改正，并处以罚款。",
      "{x}关于召开临时股东大会的通知。本公司董事会决定召开临时股东大会，审议关于变更公司经营范围的议案。股权登记日收市后登记在册的公司股东均有权出席本次股东大会。",
      "质量抽检不合格产品信息公告。经抽样检验，{x}生产的部分批次产品不符合国家标准要求。市场监管部门已责令该企业停止销售不合格产品，召回已售出产品，并依法进行调查处理。",
     ],
     "person": [
      "关于给予{x}党内严重警告处分的决定。经查，{x}违反中央八项规定精神，违规收受礼品礼金，造成不良影响。经研究，决定给予{x}党内严重警告处分。",
      "表彰决定。在全市抗洪抢险工作中，{x}同志冲锋在前，不怕牺牲，表现突出。为弘扬先进，市委决定授予{x}同志优秀共产党员称号，号召全市广大党员向其学习。",
      "寻人启事。{x}，男，现年七十二岁，于本月三日上午在公园附近走失，走失时身穿蓝色外套，患有老年痴呆症。如有知情者请与家属联系，必有重谢。",
     ],
     "place": [
      "关于{x}列入全省美丽乡村示范点的通知。经县级推荐、市级审核和省级评审，{x}符合美丽乡村示范点建设标准，现予列入。各地要加大支持力度，加强示范引领。",
      "{x}停电通知。因线路检修需要，{x}部分区域将于本周六上午八时至下午六时停电，届时将影响居民生活用电。请广大用户提前做好准备，由此带来的不便敬请谅解。",
      "疫情防控通告。根据当前疫情形势，经研究决定，将{x}调整为低风险地区，自即日起恢复正常生产生活秩序。请居民继续做好个人防护，配合落实各项防控措施。",
     ],
    }
    return T, {"company": company, "person": person, "place": lambda: rng.choice(towns)}


def main() -> None:
    """Decide the pairs and print (or write) how many of each kind were merged."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=("tuned", "held_out"), default="held_out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-template", type=int, default=30)
    ap.add_argument("--json", type=Path)
    ap.add_argument("-v", "--verbose", action="store_true", help="print each merged pair")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    templates, gen = (tuned if args.set == "tuned" else held_out)(rng)
    merged: dict[str, int] = {}
    total: dict[str, int] = {}
    for kind, texts in templates.items():
        for t in texts:
            for n in range(args.per_template):
                a = gen[kind]()
                b = gen[kind]()
                while b == a:
                    b = gen[kind]()
                first = f"{kind}-{len(total)}-{n}-a"
                with Deduplicator() as dedup:
                    dedup.decide({"id": first, "text": t.format(x=a)})
                    d = dedup.decide({"id": first[:-1] + "b", "text": t.format(x=b)})
                total[kind] = total.get(kind, 0) + 1
                if d.status is Status.DUPLICATE:
                    merged[kind] = merged.get(kind, 0) + 1
                    if args.verbose:
                        print("merged", kind, a, b, file=sys.stderr)
    all_merged, all_total = sum(merged.values()), sum(total.values())
    emit({"bench": "template_lookalikes", "set": args.set, "seed": args.seed,
          "merged_by_kind": {k: f"{merged.get(k, 0)}/{n} = {merged.get(k, 0) / n:.4f}" for k, n in total.items()},
          "merged": f"{all_merged}/{all_total} = {all_merged / all_total:.4f}"}, args.json)


if __name__ == "__main__":
    main()
