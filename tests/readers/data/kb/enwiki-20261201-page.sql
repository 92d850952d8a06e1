-- MySQL dump 10.16  Distrib 10.1.41-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: db1206    Database: xxwiki
-- ------------------------------------------------------
-- Server version	10.6.17-MariaDB-log

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40103 SET TIME_ZONE='+00:00' */;

--
-- Table structure for table `page`
--

DROP TABLE IF EXISTS `page`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8 */;
CREATE TABLE `page` (
  `page_id` int(10) unsigned NOT NULL AUTO_INCREMENT,
  `page_namespace` int(11) NOT NULL DEFAULT '0',
  `page_title` varbinary(255) NOT NULL DEFAULT '',
  `page_restrictions` tinyblob NOT NULL,
  `page_is_redirect` tinyint(3) unsigned NOT NULL DEFAULT '0',
  `page_is_new` tinyint(3) unsigned NOT NULL DEFAULT '0',
  `page_random` double unsigned NOT NULL DEFAULT '0',
  `page_touched` varbinary(14) NOT NULL DEFAULT '',
  `page_links_updated` varbinary(14) DEFAULT NULL,
  `page_latest` int(10) unsigned NOT NULL DEFAULT '0',
  `page_len` int(10) unsigned NOT NULL DEFAULT '0',
  `page_content_model` varbinary(32) DEFAULT NULL,
  `page_lang` varbinary(35) DEFAULT NULL,
  PRIMARY KEY (`page_id`),
  UNIQUE KEY `name_title` (`page_namespace`,`page_title`),
  KEY `page_random` (`page_random`),
  KEY `page_len` (`page_len`),
  KEY `page_redirect_namespace_len` (`page_is_redirect`,`page_namespace`,`page_len`)
) ENGINE=InnoDB AUTO_INCREMENT=22 DEFAULT CHARSET=binary;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `page`
--

/*!40000 ALTER TABLE `page` DISABLE KEYS */;
INSERT INTO `page` VALUES (1,0,'China','',0,0,0.001123456789,'20261120000000',NULL,1001,10,'wikitext',NULL),(2,0,'People\'s_Republic_of_China','',1,0,0.002123456789,'20261120000000',NULL,1002,20,'wikitext',NULL),(3,0,'Paris','',0,0,0.003123456789,'20261120000000',NULL,1003,30,'wikitext',NULL),(4,0,'Paris_(France)','',1,0,0.004123456789,'20261120000000',NULL,1004,40,'wikitext',NULL),(5,0,'Barack_Obama','',0,0,0.005123456789,'20261120000000',NULL,1005,50,'wikitext',NULL),(6,0,'Barack_H._Obama','',1,0,0.006123456789,'20261120000000',NULL,1006,60,'wikitext',NULL),(7,0,'Double_to_Paris','',1,0,0.007123456789,'20261120000000',NULL,1007,70,'wikitext',NULL),(8,0,'Loop_A','',1,0,0.008123456789,'20261120000000',NULL,1008,80,'wikitext',NULL),(9,0,'Loop_B','',1,0,0.009123456789,'20261120000000',NULL,1009,90,'wikitext',NULL),(10,0,'To_nowhere','',1,0,0.010123456789,'20261120000000',NULL,1010,100,'wikitext',NULL),(11,0,'History_of_Paris_(section)','',1,0,0.011123456789,'20261120000000',NULL,1011,110,'wikitext',NULL),(12,0,'Wiktionary_word','',1,0,0.012123456789,'20261120000000',NULL,1012,120,'wikitext',NULL);
INSERT INTO `page` VALUES (13,0,'Mercury','',0,0,0.013123456789,'20261120000000',NULL,1013,130,'wikitext',NULL),(14,0,'It\'s_a_\"quote\"_with_back\\slash','',0,0,0.014123456789,'20261120000000',NULL,1014,140,'wikitext',NULL),(15,0,'Two\nlines','',0,0,0.015123456789,'20261120000000',NULL,1015,150,'wikitext',NULL),(16,0,'𝄞_Music','',0,0,0.016123456789,'20261120000000',NULL,1016,160,'wikitext',NULL),(17,1,'China','',0,0,0.017123456789,'20261120000000',NULL,1017,170,'wikitext',NULL),(18,14,'Cities','',0,0,0.018123456789,'20261120000000',NULL,1018,180,'wikitext',NULL),(19,0,'Category_redirect','',1,0,0.019123456789,'20261120000000',NULL,1019,190,'wikitext',NULL),(20,0,'A_(b),(c)','',0,0,0.020123456789,'20261120000000',NULL,1020,200,'wikitext',NULL),(21,0,'Tab	and\rreturn','',0,0,0.021123456789,'20261120000000',NULL,1021,210,'wikitext',NULL);
/*!40000 ALTER TABLE `page` ENABLE KEYS */;

/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

-- Dump completed on 2026-12-01  2:44:10
